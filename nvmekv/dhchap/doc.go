// Package dhchap is NVMe in-band authentication with DH-HMAC-CHAP (NVMe
// Base Specification 2.0, §8.13; the Linux host and target implement the
// same: drivers/nvme/host/auth.c, drivers/nvme/target/auth.c,
// fabrics-cmd-auth.c): secrets in their DHHC-1 representation and the
// key transform, the RFC 7919 finite field Diffie-Hellman groups, the
// responses, the protocol messages, the controller's side of a
// transaction (Transaction, what nvmekv/tcptarget runs per queue) and the
// host's (Authenticate, what nvmekv/nvmetcp runs). The primitives are
// Go's crypto/hmac, crypto/sha256, crypto/sha512 and math/big.
//
// A transaction: the host sends Negotiate (the hashes and DH groups it
// takes); the controller answers Challenge (its choice, a sequence number
// S1, a random challenge C1 and its DH value); the host sends Reply (its
// response R1 over C1, its DH value and, to authenticate the controller
// too, a challenge C2 with S2); the controller checks R1 and answers
// Success1 (with R2 over C2 when asked), or Failure1; the host checks R2
// and ends with Success2, or Failure2.
//
// # Invariants
//
//   - D1: ParseSecret takes exactly the representation nvme-cli's
//     gen-dhchap-key prints (a known key round-trips byte for byte; the
//     transformed key is nvme-cli's) and refuses any other string without
//     repeating its key (TestSecretRepresentation).
//   - D2: the DH primes are RFC 7919's (TestGroupsAreRFC7919).
//   - D3: a Transaction is Authenticated only after a Reply whose response
//     matches the host's secret over this transaction's challenge, and,
//     when the host asked, after its Success2; any other message ends it
//     with Failure1 (TestTransaction).
//
// # Caveats
//
//   - Secure channel concatenation (a TLS PSK from the session, TP 8011)
//     is refused (ReasonConcatMismatch).
//   - The peer's DH value is checked for 1 < Y < p-1 only (RFC 7919 §5.1);
//     with a safe prime that leaves at most the one bit of a subgroup of
//     order 2.
//   - The modular exponentiations are math/big's, which is not constant
//     time (neither the standard library nor golang.org/x/crypto exports
//     finite field DH); the secret exponents are ephemeral, one per
//     transaction, and responses are compared with hmac.Equal.
package dhchap
