// Package redistest starts real redis-server processes for tests: a single
// server, or a Redis Cluster of masters and replicas on loopback ports,
// created with redis-cli --cluster create, as an operator would. It kills
// and restarts nodes for failure tests, and tears everything down when the
// test ends. A machine without redis-server (Debian's redis-server 7.0)
// skips the test with a printed reason, or fails it under
// TIERCACHE_NO_SKIP=1 (as in CI).
//
// # Invariants
//
//   - RT1: StartCluster returns once every node reports cluster_state:ok
//     and every slot is served, so a client's first command finds the
//     topology complete (TestClusterComesUp).
//   - RT2: Kill stops a node at once (SIGKILL); Restart starts it again on
//     its port with its node configuration, so it rejoins the cluster it
//     was in (TestKillAndRestart).
//   - RT3: a Proxy forwards each new connection to its target at the time
//     of the connection; Retarget moves later connections only
//     (TestProxyMovesNewConnections).
//   - RT4: a process started with Start (every redis-server here, and the
//     tests' other children that use it) is killed when the test process
//     dies, even by a -timeout panic or SIGKILL, and not when another of
//     its threads ends (TestChildDiesWithTestProcess).
package redistest
