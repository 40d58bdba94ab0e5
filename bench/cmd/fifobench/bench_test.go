//go:build linux

package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary be the Go client, as the harness binary
// is.
func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(goClient(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// tiny is a run small enough for a test: the counts say nothing about
// speed, only that every part works.
func tiny(client string) config {
	return config{
		rounds: 1, only: allParts, pings: 20, sizeMiB: 2, spawns: 3, requests: 5, asks: 3, askGaps: []time.Duration{0, 10 * time.Millisecond}, dockerRuns: 1, sessionCycles: 2,
		scaleNs: []int{2}, scaleIdle: 200 * time.Millisecond, scaleTries: 2, scaleCycles: 2,
		idle: time.Second, stall: 50, straceN: 20, clientKind: client, cpu: 0,
	}
}

// clientKinds are the clients this machine can test: the Go one always,
// the C one with a C compiler.
func clientKinds() []string {
	if findCC() != "" {
		return []string{"c", "go"}
	}
	return []string{"go"}
}

// requireClean fails when a process the harness started is still this
// process's child or a descriptor it opened is still open. setup made the
// test a child subreaper, so a process that a contender left behind is
// its child too.
func requireClean(t *testing.T, fds int) {
	t.Helper()
	require.Empty(t, children(os.Getpid()), "processes left behind")
	require.Equal(t, fds, leakcheck.FDs(t), "descriptors left open")
}

// TestBridges pushes lines, a stream and exec requests through every
// contender with each client, which checks every echo and every byte.
func TestBridges(t *testing.T) {
	for _, kind := range clientKinds() {
		t.Run(kind, func(t *testing.T) {
			b, err := setup(tiny(kind), t.TempDir())
			require.NoError(t, err)
			fds := leakcheck.FDs(t)
			for _, name := range []string{direct, floor, bridge, floorTTY, bridgeTTY} {
				if !b.available(name) {
					continue
				}
				t.Run(name, func(t *testing.T) {
					rn, err := b.start(name, unpinned)
					require.NoError(t, err)
					defer func() { require.NoError(t, rn.stop()) }()
					for _, fresh := range []bool{false, true} {
						us, err := b.ping(rn, unpinned, 5, 2, fresh)
						require.NoError(t, err, "fresh writer: %v", fresh)
						require.Len(t, us, 5)
					}
					if floorOf(name) != floorTTY {
						rows, err := b.runClient(unpinned, "-m", "tput", "-b", "2", rn.in, rn.out)
						require.NoError(t, err)
						require.Equal(t, [][]int64{{2 << 20, rows[0][1]}}, rows)
					}
				})
			}
			t.Run("exec", func(t *testing.T) {
				us, err := b.execRequests(bridgeExec)
				require.NoError(t, err)
				require.Len(t, us, 5)
			})
			requireClean(t, fds)
		})
	}
}

// TestRun runs every part once, tiny, with the binary under test as
// -before's too, and checks the report has every table, and that the run
// left nothing behind: no process, no descriptor, no docker image or
// container.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole run takes seconds")
	}
	b, err := setup(tiny("auto"), t.TempDir())
	require.NoError(t, err)
	b.before = b.bin
	fds := leakcheck.FDs(t)
	r := newResults()
	require.NoError(t, b.measure(r))
	requireClean(t, fds)
	docker := b.dockerMissing() == ""
	if docker {
		require.Nil(t, b.image, "the image is forgotten once removed")
		require.NotEmpty(t, b.imageTag)
		for _, list := range [][]string{{"ps", "-aq"}, {"images", "-q"}} {
			out, err := dockerCmd(append(list, "--filter", "label="+dockerLabel+"="+b.imageTag)...)
			require.NoError(t, err)
			require.Empty(t, out, "docker %v: left behind", list)
		}
	}

	report := r.report(b.placements())
	for _, want := range []string{
		"Round trip of a line, unpinned", "Stream throughput", "Start and exit",
		"Exec mode", "per second", "print(1)", "A shell on a terminal", "Sessions at scale", "Before and after", "fifobridge at rest", "Stop of exec mode", "under load", "Targets",
	} {
		require.Contains(t, report, want)
	}
	for _, m := range []string{rtMetric(50, false, unpinned), rtMetric(99, true, unpinned), tputMetric, startMetric} {
		for _, who := range []string{bridge, bridgeBefore} {
			_, ok := r.get(m, who)
			require.True(t, ok, "no %s figure for %s", who, m)
		}
	}
	for _, k := range senderCounts {
		for _, who := range []string{bridgeExec, bridgeExecBefore, execLoop} {
			_, ok := r.get(rateMetric(k), who)
			require.True(t, ok, "no %s figure for %s", who, rateMetric(k))
		}
	}
	for _, who := range b.have(askContenders, newResults()) {
		_, ok := r.get(askMetric, who)
		require.True(t, ok, "no %s figure for %s", who, askMetric)
	}
	sessions := []string{sessFloor, sessBridge}
	if docker {
		sessions = sessContenders
	}
	for _, who := range sessions {
		for _, m := range []string{sessP50Metric, sessP99Metric} {
			_, ok := r.get(m, who)
			require.True(t, ok, "no %s figure for %s", who, m)
		}
	}
	if docker {
		for _, w := range []struct{ metric, who string }{
			{dockerRunMetric, bridge}, {dockerRunMetric, bridgeBefore}, {dockerRunMetric, bareTrue},
			{dockerReqMetric, sendName}, {dockerReqMetric, dockerExecName},
		} {
			_, ok := r.get(w.metric, w.who)
			require.True(t, ok, "no %s figure for %s", w.who, w.metric)
		}
	}
	require.NotNil(t, r.stall)
	require.Equal(t, 50, r.stall.n)
	svg := r.chart("test", b.placements())
	require.True(t, strings.HasPrefix(svg, "<svg") && strings.HasSuffix(svg, "</svg>\n"))
}

// TestAsk asks python3 print(1) through every contender of the ask part
// this machine has (pexpect's only where python3 can import it; a note
// says so otherwise) and checks each answer; then the whole part, back to
// back and 10ms apart (the contenders that keep a REPL: both spacings in
// one table), and that it goes without python3, with a note; and that
// nothing is left behind.
func TestAsk(t *testing.T) {
	b, err := setup(tiny("go"), t.TempDir())
	require.NoError(t, err)
	require.NotEmpty(t, b.tools["python3"], "python3 is needed (CI installs it)")
	fds := leakcheck.FDs(t)
	r := newResults()
	have := b.have(askContenders, r)
	if !b.pexpect {
		require.Equal(t, []string{askPexpect + ": skipped (python3 has no pexpect: apt-get install python3-pexpect)"}, r.notes)
	}
	for _, name := range have {
		t.Run(name, func(t *testing.T) {
			a, err := b.newAsker(name, 0)
			require.NoError(t, err)
			var answers []string
			var askErr error
			for range 2 {
				got, took, err := a.ask()
				if askErr = err; err != nil {
					break
				}
				require.Positive(t, took)
				answers = append(answers, got)
			}
			require.NoError(t, a.close()) // first, so that a failure leaves nothing behind
			require.NoError(t, askErr)
			require.Equal(t, []string{a.want, a.want}, answers)
			ms, err := b.askRuns(name, 0)
			require.NoError(t, err)
			require.Len(t, ms, b.asks)
		})
	}
	requireClean(t, fds)

	r = newResults()
	require.NoError(t, askPart(b, 0, r))
	require.Equal(t, have, r.whos(askMetric))
	var spaced []string
	for _, name := range have {
		if slices.Contains(askSpaced, name) {
			spaced = append(spaced, name)
		}
	}
	require.Equal(t, spaced, r.whos(askMetricAt(10*time.Millisecond)), "those that keep a REPL, asked 10ms apart")
	report := r.report(nil)
	require.Contains(t, report, "| contender | back to back | 10ms apart | vs pexpect replwrap | vs the floor |")
	requireClean(t, fds)

	b.tools["python3"] = ""
	r = newResults()
	require.NoError(t, askPart(b, 0, r))
	require.Equal(t, []string{askSendCat}, r.whos(askMetric), "only cat needs no python3")
	require.Contains(t, r.notes, askFloor+": skipped (python3 is not installed)")
}

// TestSessions runs the sessions part's cycle through every contender
// this machine has (those of Docker only where an engine answers: a note
// says so otherwise), each answer checked, and checks that nothing is
// left behind: no process, no descriptor, no container.
func TestSessions(t *testing.T) {
	b, err := setup(tiny("go"), t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.closeDocker()) }()
	fds := leakcheck.FDs(t)
	r := newResults()
	require.NoError(t, sessionsPart(b, 0, r))
	requireClean(t, fds)
	want := sessContenders
	if why := b.dockerMissing(); why != "" {
		want = []string{sessFloor, sessBridge}
		require.Equal(t, []string{"sessions: " + sessInDocker + " and " + sessExec + " skipped (" + why + ")"}, r.notes)
	} else {
		out, err := dockerCmd("ps", "-aq", "--filter", "label="+dockerLabel+"="+b.imageTag)
		require.NoError(t, err)
		require.Empty(t, out, "containers left behind")
	}
	require.ElementsMatch(t, want, r.whos(sessP50Metric))
	require.ElementsMatch(t, want, r.whos(sessP99Metric))
	for _, who := range want {
		s, _ := r.get(sessP50Metric, who)
		require.Positive(t, s.med, who)
	}
	require.Contains(t, r.report(b.placements()), "A shell on a terminal")
}

// TestPTYCycle drives the floor's shell through one cycle, and checks
// that escape sequences are no part of what the terminal is read as.
func TestPTYCycle(t *testing.T) {
	b, err := setup(tiny("go"), t.TempDir())
	require.NoError(t, err)
	fds := leakcheck.FDs(t)
	got, err := ptyCycle(b.sessShell(), []string{"PS1=" + sessPrompt, "TERM=dumb"}, sessCommand, sessAnswer)
	require.NoError(t, err)
	require.Equal(t, sessAnswer, got)
	requireClean(t, fds)
	require.Equal(t, "$ x\r\n$ ", stripCSI([]byte("$ \x1b[6nx\r\n\x1b[1;31m$ \x1b[")))
}

// TestScale runs the scale part with two sessions on each contender this
// machine has (tmux only where it is installed: a note says so
// otherwise), every answer checked, and checks that it has every figure
// and left nothing behind: no process, no descriptor.
func TestScale(t *testing.T) {
	b, err := setup(tiny("go"), t.TempDir())
	require.NoError(t, err)
	require.NotEmpty(t, b.tools["bash"], "bash is needed")
	fds := leakcheck.FDs(t)
	r := newResults()
	require.NoError(t, scalePart(b, 0, r))
	requireClean(t, fds)
	sides, cycles := []string{scaleBridge}, []string{cycFloor, cycBridge}
	if b.tools["tmux"] != "" {
		sides, cycles = append(sides, scaleTmux), append(cycles, cycTmux)
	} else {
		require.Contains(t, r.notes, "sessions at scale: tmux is not installed, fifobridge is measured alone")
	}
	for _, who := range sides {
		for _, kind := range scaleKinds {
			_, ok := r.get(scaleMetric(kind, 2), who)
			require.True(t, ok, "no %s figure for %s", scaleMetric(kind, 2), who)
		}
		for _, kind := range []string{scaleRSS, scaleFDTotal, scaleCPU} {
			_, ok := r.get(scaleMetric(kind, 0), who)
			require.True(t, ok, "no %s figure for %s", scaleMetric(kind, 0), who)
		}
		s, _ := r.get(scaleMetric(scaleFDs, 2), who)
		require.Positive(t, s.med, "%s holds a descriptor or more per session", who)
	}
	require.ElementsMatch(t, cycles, r.whos(cycP50Metric))
	report := r.report(b.placements())
	require.Contains(t, report, "Sessions at scale")
	require.Contains(t, report, "A bash session's whole cycle")
	require.Contains(t, report, "2 sessions idle: ≤ 100 kB of the agent's memory each")
}
