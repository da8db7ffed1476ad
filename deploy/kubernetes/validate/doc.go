// Package validate checks the Kubernetes example (../tiercache.yaml) in
// CI: a test-only module, so that the Kubernetes API types stay out of
// tiercache's own dependencies. Debian's kubectl (1.20) is too old for
// native sidecars; the types of a current k8s.io/api are not.
//
// # Invariants
//
//   - K1: every document decodes strictly (no unknown or duplicate field)
//     into its kind's API type (TestManifestsDecodeStrictly).
//   - K2: tiercache is a native sidecar: an init container with
//     restartPolicy Always, whose startup and readiness probes run
//     `tiercache probe ready` and liveness probe `tiercache probe live`
//     with the image's binary (TestSidecarContainer).
//   - K3: the socket's emptyDir is mounted at the socket's directory in
//     both containers, the data emptyDir at cold.data_dir with room for
//     cold.capacity (TestVolumes).
//   - K4: the pod runs as non-root with the image's user, an fsGroup the
//     socket's mode 0660 lets the app in by, the seccomp profile
//     deploy/seccomp/tiercache.json (which allows io_uring) and only
//     CAP_SYS_NICE (TestSecurityContext).
//   - K5: the sidecar's memory request and limit cover the memory model's
//     bound for the ConfigMap's budgets (TestMemoryCoversBudget).
package validate
