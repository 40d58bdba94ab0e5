package child

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// An agent (100) with two children, A and B, and what they started.
const fixtureAgent = 100

var (
	fixtureA = candidate{pid: 200, start: 10}
	fixtureB = candidate{pid: 300, start: 20}
)

var fixture = []proc{
	{pid: fixtureAgent, ppid: 1, pgid: fixtureAgent, sid: fixtureAgent, start: 1},
	{pid: 150, ppid: fixtureAgent, pgid: 150, sid: 150, start: 2},           // inherited from an entrypoint shell
	{pid: 200, ppid: fixtureAgent, pgid: 200, sid: fixtureAgent, start: 10}, // A
	{pid: 201, ppid: 200, pgid: 200, sid: fixtureAgent, start: 11},          // A's group
	{pid: 202, ppid: 201, pgid: 202, sid: 202, start: 12},                   // A's descendant, setsid'ed
	{pid: 203, ppid: 202, pgid: 202, sid: 202, start: 13},                   // and its child
	{pid: 240, ppid: fixtureAgent, pgid: 240, sid: 240, start: 15},          // orphan from before B started
	{pid: 300, ppid: fixtureAgent, pgid: 300, sid: fixtureAgent, start: 20}, // B
	{pid: 301, ppid: 300, pgid: 300, sid: fixtureAgent, start: 21},          // B's group
	{pid: 210, ppid: fixtureAgent, pgid: 210, sid: 210, start: 25},          // orphan, setsid'ed: A's or B's?
	{pid: 211, ppid: 210, pgid: 210, sid: 210, start: 26},                   // its child
	{pid: 220, ppid: fixtureAgent, pgid: 200, sid: fixtureAgent, start: 30}, // orphan in A's group
	{pid: 230, ppid: fixtureAgent, pgid: 230, sid: 202, start: 31},          // orphan in the session of A's 202
	{pid: 250, ppid: fixtureAgent, pgid: 250, sid: 250, start: 5},           // orphan older than both
}

var fixtureInherited = map[int]uint64{150: 2}

// fixtureTree returns the pids of target's tree in the fixture. The listing
// leaves out the children that were reaped, as /proc does; their group
// members have the agent for parent by then.
func fixtureTree(target candidate, others ...candidate) []int {
	a, b := fixtureA, fixtureB
	gone := func(c candidate) bool {
		if c.pid == target.pid {
			return target.reaped
		}
		return !slices.ContainsFunc(others, func(o candidate) bool { return o.pid == c.pid })
	}
	var listed []proc
	for _, q := range fixture {
		if (q.pid == a.pid && gone(a)) || (q.pid == b.pid && gone(b)) {
			continue
		}
		if (q.ppid == a.pid && gone(a)) || (q.ppid == b.pid && gone(b)) {
			q.ppid = fixtureAgent
		}
		listed = append(listed, q)
	}
	var out []int
	tree, _ := attribute(target, others, fixtureAgent, fixtureInherited, listed)
	for _, q := range tree {
		out = append(out, q.pid)
	}
	slices.Sort(out)
	return out
}

func reaped(c candidate) candidate                   { c.reaped = true; return c }
func stopping(c candidate, seq uint64) candidate     { c.stopping = seq; return c }
func adopted(c candidate, keys ...procKey) candidate { c.adopted = keys; return c }

// TestAttribute checks which processes make up a child's tree while the
// other child runs or after it ended.
func TestAttribute(t *testing.T) {
	a, b, pids := fixtureA, fixtureB, fixtureTree
	require.Equal(t, []int{200, 201, 202, 203, 220, 230, 240}, pids(a, b),
		"A while B runs: the orphan 210 could be B's")
	require.Equal(t, []int{300, 301}, pids(b, a),
		"B while A runs: the orphan 210 could be A's, 240 started before B")
	require.Equal(t, []int{301}, pids(reaped(b), a),
		"B ended while A runs: its group, not A's helper")
	require.Equal(t, []int{200, 201, 202, 203, 210, 211, 220, 230, 240, 301}, pids(a),
		"A alone (B ended): A is the only candidate for 210, and for what B left")
	require.Equal(t, []int{201, 202, 203, 210, 211, 220, 230, 240, 301}, pids(reaped(a)),
		"A ended, nothing else runs")
	require.Equal(t, []int{201, 202, 203, 220, 230, 240}, pids(reaped(a), b),
		"A ended while B runs: the orphan 210 could be B's")
}

// TestAttributeStopping checks the orphan 210, which could be A's or B's,
// goes to exactly one of them when both are being stopped.
func TestAttributeStopping(t *testing.T) {
	a, b, pids := fixtureA, fixtureB, fixtureTree
	// The orphan goes to the stop that began last, so that it is signalled
	// by one stop only.
	require.Equal(t, []int{300, 301}, pids(stopping(b, 1), stopping(a, 2)))
	require.Equal(t, []int{200, 201, 202, 203, 210, 211, 220, 230, 240}, pids(stopping(a, 2), stopping(b, 1)))
	require.Equal(t, []int{210, 211, 300, 301}, pids(stopping(b, 2), stopping(a, 1)))
	require.Equal(t, []int{300, 301}, pids(stopping(b, 2), a), "A runs on")

	// A's stop took the orphan; a stop of B begun later leaves it to A.
	took := procKey{210, 25}
	require.Equal(t, []int{300, 301}, pids(stopping(b, 3), adopted(stopping(a, 2), took)))
	require.Equal(t, []int{200, 201, 202, 203, 210, 211, 220, 230, 240}, pids(adopted(stopping(a, 2), took), stopping(b, 3)))
	require.Equal(t, []int{210, 211, 300, 301}, pids(stopping(b, 3), adopted(stopping(a, 2), procKey{210, 24})),
		"A adopted another process of that pid: the stop begun last takes this one")

	// What attribute reports as taken: the orphans it gave the target.
	_, keys := attribute(stopping(a, 2), []candidate{stopping(b, 1)}, fixtureAgent, fixtureInherited, fixture)
	require.ElementsMatch(t, []procKey{{240, 15}, took, {230, 31}}, keys)
	_, keys = attribute(a, []candidate{b}, fixtureAgent, fixtureInherited, fixture)
	require.ElementsMatch(t, []procKey{{240, 15}, {230, 31}}, keys)
}

// TestAttributeReusedPid checks that a reaped child whose pid now belongs
// to a newer child claims neither that child nor its group.
func TestAttributeReusedPid(t *testing.T) {
	const agent = 100
	old := candidate{pid: 200, start: 10, reaped: true}
	newer := candidate{pid: 200, start: 50}
	// The kernel hands out 200 again only once old's group is empty.
	all := []proc{
		{pid: 201, ppid: agent, pgid: 201, sid: 201, start: 11},   // left by old, in a session of its own
		{pid: 200, ppid: agent, pgid: 200, sid: agent, start: 50}, // newer, same pid
		{pid: 202, ppid: 200, pgid: 200, sid: agent, start: 51},   // newer's group
	}
	got, _ := attribute(old, []candidate{newer}, agent, nil, all)
	require.Equal(t, []proc{all[0]}, got, "the group number is the newer child's now")
	got, _ = attribute(newer, nil, agent, nil, all)
	require.Equal(t, all[1:], got)

	// A process that took the pid but is no child of ours.
	stranger := []proc{
		{pid: 200, ppid: 1, pgid: 200, sid: 200, start: 50},
		{pid: 202, ppid: 200, pgid: 200, sid: 200, start: 51},
	}
	got, _ = attribute(old, nil, agent, nil, stranger)
	require.Empty(t, got)
}
