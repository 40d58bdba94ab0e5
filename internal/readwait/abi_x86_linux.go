//go:build linux && (386 || amd64)

package readwait

// The two ABIs an x86 kernel runs side by side, with their numbers written
// out (golang.org/x/sys has only the agent's own): a 64-bit agent may have
// 32-bit children and the other way round. TestX86Tables checks the
// agent's own against golang.org/x/sys.

var x8664 = abi{name: "x86_64", long: 8, calls: []sysCall{
	{0, callRead}, {19, callRead}, {17, callRead}, {295, callRead}, {327, callRead}, {275, callRead},
	{23, callSelect}, {270, callSelect},
	{7, callPoll}, {271, callPoll},
	{232, callEpoll}, {281, callEpoll}, {441, callEpoll},
}}

var i386 = abi{name: "i386", long: 4, calls: []sysCall{
	{3, callRead}, {145, callRead}, {180, callRead}, {333, callRead}, {378, callRead}, {313, callRead},
	{142, callSelect}, {308, callSelect}, {413, callSelect},
	{168, callPoll}, {309, callPoll}, {414, callPoll},
	{256, callEpoll}, {319, callEpoll}, {441, callEpoll},
}}

// ELF machines and classes of the two.
const (
	emI386  = 3
	emX8664 = 62
	class32 = 1
	class64 = 2
)

// otherABI is the ABI of an executable that is not the agent's own, when
// this agent knows it: on x86, the other of the two.
func otherABI(id elfID) *abi {
	switch {
	case id.machine == emX8664 && id.class == class64:
		return &x8664
	case id.machine == emI386 && id.class == class32:
		return &i386
	}
	return nil // x32 (x86_64 machine, 32-bit class) among them
}
