//go:build linux

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
	{PID: fixtureAgent, PPID: 1, PGID: fixtureAgent, SID: fixtureAgent, Start: 1},
	{PID: 150, PPID: fixtureAgent, PGID: 150, SID: 150, Start: 2},           // inherited from an entrypoint shell
	{PID: 200, PPID: fixtureAgent, PGID: 200, SID: fixtureAgent, Start: 10}, // A
	{PID: 201, PPID: 200, PGID: 200, SID: fixtureAgent, Start: 11},          // A's group
	{PID: 202, PPID: 201, PGID: 202, SID: 202, Start: 12},                   // A's descendant, setsid'ed
	{PID: 203, PPID: 202, PGID: 202, SID: 202, Start: 13},                   // and its child
	{PID: 240, PPID: fixtureAgent, PGID: 240, SID: 240, Start: 15},          // orphan from before B started
	{PID: 300, PPID: fixtureAgent, PGID: 300, SID: fixtureAgent, Start: 20}, // B
	{PID: 301, PPID: 300, PGID: 300, SID: fixtureAgent, Start: 21},          // B's group
	{PID: 210, PPID: fixtureAgent, PGID: 210, SID: 210, Start: 25},          // orphan, setsid'ed: A's or B's?
	{PID: 211, PPID: 210, PGID: 210, SID: 210, Start: 26},                   // its child
	{PID: 220, PPID: fixtureAgent, PGID: 200, SID: fixtureAgent, Start: 30}, // orphan in A's group
	{PID: 230, PPID: fixtureAgent, PGID: 230, SID: 202, Start: 31},          // orphan in the session of A's 202
	{PID: 250, PPID: fixtureAgent, PGID: 250, SID: 250, Start: 5},           // orphan older than both
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
		if (q.PID == a.pid && gone(a)) || (q.PID == b.pid && gone(b)) {
			continue
		}
		if (q.PPID == a.pid && gone(a)) || (q.PPID == b.pid && gone(b)) {
			q.PPID = fixtureAgent
		}
		listed = append(listed, q)
	}
	var out []int
	tree, _ := attribute(target, others, fixtureAgent, fixtureInherited, listed)
	for _, q := range tree {
		out = append(out, q.PID)
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
		"A adopted another process of that PID: the stop begun last takes this one")

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
		{PID: 201, PPID: agent, PGID: 201, SID: 201, Start: 11},   // left by old, in a session of its own
		{PID: 200, PPID: agent, PGID: 200, SID: agent, Start: 50}, // newer, same pid
		{PID: 202, PPID: 200, PGID: 200, SID: agent, Start: 51},   // newer's group
	}
	got, _ := attribute(old, []candidate{newer}, agent, nil, all)
	require.Equal(t, []proc{all[0]}, got, "the group number is the newer child's now")
	got, _ = attribute(newer, nil, agent, nil, all)
	require.Equal(t, all[1:], got)

	// A process that took the pid but is no child of ours.
	stranger := []proc{
		{PID: 200, PPID: 1, PGID: 200, SID: 200, Start: 50},
		{PID: 202, PPID: 200, PGID: 200, SID: 200, Start: 51},
	}
	got, _ = attribute(old, nil, agent, nil, stranger)
	require.Empty(t, got)
}

// TestAttributeCgroup checks an orphan in a child's cgroup is that child's,
// whatever the other rules would say, and that the cgroups are read only
// when there is an orphan to place.
func TestAttributeCgroup(t *testing.T) {
	a, b, pids := fixtureA, fixtureB, fixtureTree
	inCgroup := func(c candidate, members ...int) candidate {
		c.cgroup = func() []int { return members }
		return c
	}
	require.Equal(t, []int{210, 211, 300, 301}, pids(inCgroup(b, 300, 301, 210), a),
		"B while A runs: the orphan 210 stayed in B's cgroup")
	require.Equal(t, []int{200, 201, 202, 203, 220, 230, 240}, pids(a, inCgroup(b, 300, 301, 210)),
		"A while B runs")
	require.Equal(t, []int{200, 201, 202, 203, 220, 230, 240}, pids(stopping(a, 2), inCgroup(stopping(b, 1), 300, 301, 210)),
		"A's stop began last, but the orphan is in B's cgroup")
	require.Equal(t, []int{210, 211, 300, 301}, pids(inCgroup(stopping(b, 1), 300, 301, 210), stopping(a, 2)),
		"B's stop takes what stayed in its cgroup")
	require.Equal(t, []int{200, 201, 202, 203, 220, 230, 240}, pids(a, inCgroup(b, 300, 301)),
		"an orphan in no child's cgroup: A's only when it can be told")

	read := 0
	counted := func(c candidate) candidate {
		c.cgroup = func() []int { read++; return nil }
		return c
	}
	attribute(counted(a), []candidate{counted(b)}, fixtureAgent, fixtureInherited, fixture[:6])
	require.Zero(t, read, "no orphan, no cgroup read")
	attribute(counted(a), []candidate{counted(b)}, fixtureAgent, fixtureInherited, fixture)
	require.Equal(t, 2, read, "one read of each cgroup")
}
