//go:build linux && !(386 || amd64)

package readwait

// otherABI is the ABI of an executable that is not the agent's own, when
// this agent knows it: off x86, none (a 32-bit child of a 64-bit agent is
// not judged; the conversation waits -settle for it).
func otherABI(elfID) *abi { return nil }
