//go:build linux

package config

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// Every setting is a flag with a usage, named as its environment variable
// can name it, listed once; its default is what the flag package prints,
// and setting it again (as FIFOBRIDGE_<NAME> would) changes nothing.
func TestSettingsTable(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r := &Run{}
	r.Define(fs)
	seen := map[string]bool{}
	for _, s := range Settings {
		if seen[s.Name] {
			t.Errorf("-%s is listed twice", s.Name)
		}
		seen[s.Name] = true
		if s.Usage == "" {
			t.Errorf("-%s has no usage", s.Name)
		}
		if s.Name != strings.ToLower(s.Name) || strings.ContainsAny(s.Name, "_= ") {
			t.Errorf("-%s cannot be named by an environment variable FIFOBRIDGE_<NAME>", s.Name)
		}
		f := fs.Lookup(s.Name)
		if f == nil {
			t.Fatalf("-%s is not defined", s.Name)
		}
		if f.DefValue != s.Default {
			t.Errorf("-%s: the flag's default is %q, the table's %q", s.Name, f.DefValue, s.Default)
		}
		if s.Default == "" {
			continue // an empty value is unset, in the environment too
		}
		if err := fs.Set(s.Name, s.Default); err != nil || f.Value.String() != s.Default {
			t.Errorf("-%s: setting its default %q gives %q (%v)", s.Name, s.Default, f.Value.String(), err)
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n != len(Settings) {
		t.Errorf("%d flags defined, %d settings", n, len(Settings))
	}
}

// The defaults finish into the documented run: stream mode, the paths
// under DIR, TERM, 80x24, 16 sessions; and each setting parses into its
// own field.
func TestFinishDefaults(t *testing.T) {
	r := parse(t)
	if r.Mode != "stream" || r.In != "/run/fifobridge/in" || r.Out != "/run/fifobridge/out" ||
		r.StatusPath != "/run/fifobridge/status.json" || r.StopSignal.String() != "terminated" ||
		r.TtySize.Cols != 80 || r.TtySize.Rows != 24 || r.MaxSessions != 16 || r.SessionIdle != 0 ||
		r.MaxRequest != 1<<20 || r.Perm != 0o660 || r.Prompt != nil || r.WorkDir != "/wd" {
		t.Errorf("defaults finished into %+v", r)
	}
	r = parse(t, "-dir", "rel", "-mode", "sessions", "-max-sessions", "3", "-session-idle", "5m", "-tty", "-prompt", `\$ $`, "-tee", "-stderr", "out")
	if r.Dir != "/wd/rel" || r.In != "/wd/rel/in" || r.MaxSessions != 3 || r.SessionIdle.Minutes() != 5 ||
		!r.Tty || r.Prompt == nil || !r.Tee || !r.StderrOut || r.StopSignal.String() != "hangup" {
		t.Errorf("sessions flags finished into %+v", r)
	}
}

// Contradictions and values out of range are refused in one line that
// names the flag; sessions mode takes the stream settings, not exec's.
func TestFinishRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "shell"}, "invalid -mode"},
		{[]string{"-mode", "exec", "-tty"}, "invalid -tty"},
		{[]string{"-mode", "exec", "-tee"}, "invalid -tee"},
		{[]string{"-mode", "exec", "-prompt", ">"}, "invalid -prompt"},
		{[]string{"-mode", "exec", "-stderr", "out"}, "invalid -stderr"},
		{[]string{"-max-sessions", "0"}, "invalid -max-sessions"},
		{[]string{"-session-idle", "-1s"}, "-session-idle"},
		{[]string{"-max-concurrent", "0"}, "invalid -max-concurrent"},
		{[]string{"-restart", "sometimes"}, "invalid -restart"},
		{[]string{"-stop-signal", "NOPE"}, "invalid -stop-signal"},
		{[]string{"-tty-size", "80"}, "invalid -tty-size"},
		{[]string{"-prompt", "(\n"}, "invalid -prompt"},
	} {
		r, fs := define()
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		r.Program = "sh"
		err := r.Finish("/wd")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

func define() (*Run, *flag.FlagSet) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r := &Run{}
	r.Define(fs)
	return r, fs
}

// parse is a finished Run of args, with PROGRAM sh started in /wd.
func parse(t *testing.T, args ...string) *Run {
	t.Helper()
	r, fs := define()
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	r.Program, r.Args = "sh", []string{"-i"}
	if err := r.Finish("/wd"); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}
