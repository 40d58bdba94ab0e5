package turn

import (
	"reflect"
	"regexp"
	"testing"
	"time"
)

// TestPromptGroups: the named groups of the prompt that ends a turn are
// reported in the expression's order, and "status" as a number when it
// matched digits only.
func TestPromptGroups(t *testing.T) {
	for _, c := range []struct {
		prompt, shown string
		groups        []Group
		status        int // -1: none
	}{
		{`^\[(?P<status>\d+)\] (?P<cwd>\S+) \$ $`, "[1] /src $ ", []Group{{"status", "1"}, {"cwd", "/src"}}, 1},
		{`^\[(?P<status>\d+)\] \$ $`, "[0] $ ", []Group{{"status", "0"}}, 0},
		{`^(?P<status>\w*)> $`, "ok> ", []Group{{"status", "ok"}}, -1},
		{`^(?P<status>\w*)> $`, "> ", []Group{{"status", ""}}, -1},
		{`^(?P<status>\d*)> $`, "99999999999999999999999> ", []Group{{"status", "99999999999999999999999"}}, -1},
		{`^(?:(?P<a>x)|(?P<b>y))> $`, "y> ", []Group{{"b", "y"}}, -1}, // a took no part
		{`^(?:(?P<a>x)|(?P<a>y))> $`, "y> ", []Group{{"a", "y"}}, -1}, // a name once
		{`^(?P<a>x)(?P<a>y)> $`, "xy> ", []Group{{"a", "x"}}, -1},     // the first of a name
		{`^(x)> $`, "x> ", nil, -1}, // no named groups
		{`^\[(?P<status>\d+)\]\$ $`, "out[3]$ ", []Group{{"status", "3"}}, 3}, // the prompt ends a line
	} {
		cl := newClock(t, c.prompt, false)
		cl.out("start\n" + c.shown).settle()
		tu := cl.ask("x\n", 0)
		if cl.tr.Groups() != nil {
			t.Errorf("%s: groups %q after Begin", c.prompt, cl.tr.Groups())
		}
		cl.out("answer\n" + c.shown).settle()
		cl.finish()
		if !tu.ended || !reflect.DeepEqual(tu.groups, c.groups) || tu.status != c.status {
			t.Errorf("%s at %q: groups %q, status %d (ended %v); want %q, %d", c.prompt, c.shown, tu.groups, tu.status, tu.ended, c.groups, c.status)
		}
	}
}

// TestGroupsQuietEnded: a turn ended by its quiet time, with no prompt,
// has no groups.
func TestGroupsQuietEnded(t *testing.T) {
	c := newClock(t, `^\[(?P<status>\d+)\] \$ $`, false)
	c.out("[0] $ ").settle()
	tu := c.ask("read x\n", 50*time.Millisecond)
	c.after(time.Second)
	c.finish()
	if !tu.ended || tu.groups != nil || tu.status != -1 {
		t.Errorf("groups %q, status %d (ended %v)", tu.groups, tu.status, tu.ended)
	}
	if _, ok := c.tr.Status(); ok {
		t.Error("a status after a quiet end")
	}
}

// TestGroupsAfterOwedPrompts: the groups come from the prompt that ends
// the turn, after those the child showed for later lines of the input.
func TestGroupsAfterOwedPrompts(t *testing.T) {
	c := newClockConfig(t, Config{Prompt: regexp.MustCompile(`^\[(?P<status>\d+)\] \$ $`), Continuation: regexp.MustCompile(`^> $`)})
	c.out("[0] $ ").settle()
	tu := c.ask("true\nfalse\n", 0)
	c.out("[0] $ [1] $ ").settle()
	c.finish()
	if !tu.ended || tu.status != 1 {
		t.Errorf("status %d (ended %v), want the last prompt's 1", tu.status, tu.ended)
	}
}
