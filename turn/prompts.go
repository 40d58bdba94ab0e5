package turn

import (
	"regexp"
	"strconv"
)

// matcher tells the child's prompts: the one that makes it ready and, if
// given, the continuation prompt that asks for more input.
type matcher struct {
	prompt, cont *regexp.Regexp
	named        bool // prompt has named groups
	// How to find the longest end of a line each matches (suffix.go).
	promptEnds, contEnds ends
}

func newMatcher(prompt, cont *regexp.Regexp) matcher {
	m := matcher{prompt: prompt, cont: cont, promptEnds: endsOf(prompt), contEnds: endsOf(cont)}
	for _, name := range prompt.SubexpNames() {
		m.named = m.named || name != ""
	}
	return m
}

// isCont reports whether v is the continuation prompt.
func (m *matcher) isCont(v []byte) bool { return m.cont != nil && m.cont.Match(v) }

// isPrompt reports whether v is a prompt of either kind.
func (m *matcher) isPrompt(v []byte) bool { return m.prompt.Match(v) || m.isCont(v) }

// prefix is the length of the shortest start of v, of at most limit
// bytes, that is a prompt of either kind, or 0.
func (m *matcher) prefix(v []byte, limit int) int {
	for n := 1; n <= len(v) && n <= limit; n++ {
		if m.isPrompt(v[:n]) {
			return n
		}
	}
	return 0
}

// Group is a named group of the prompt expression and the text it matched
// in the prompt that ended a turn.
type Group struct {
	Name, Text string
}

// groups returns the named groups of the prompt expression that take
// part in its match of v, in the expression's order, each name once (the
// first group of that name that took part).
func (m *matcher) groups(v []byte) []Group {
	if !m.named {
		return nil
	}
	at := m.prompt.FindSubmatchIndex(v)
	if at == nil {
		return nil
	}
	var gs []Group
	for i, name := range m.prompt.SubexpNames() {
		if name == "" || at[2*i] < 0 || hasGroup(gs, name) {
			continue
		}
		gs = append(gs, Group{Name: name, Text: string(v[at[2*i]:at[2*i+1]])})
	}
	return gs
}

func hasGroup(gs []Group, name string) bool {
	for _, g := range gs {
		if g.Name == name {
			return true
		}
	}
	return false
}

// StatusGroup is the name of the prompt's group that shows the status of
// the child's last command (a shell's $?).
const StatusGroup = "status"

// statusOf is the number the group StatusGroup matched, when it matched
// ASCII digits only and their value fits an int.
func statusOf(gs []Group) (int, bool) {
	for _, g := range gs {
		if g.Name != StatusGroup || g.Text == "" {
			continue
		}
		for _, c := range []byte(g.Text) {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, err := strconv.Atoi(g.Text)
		return n, err == nil
	}
	return 0, false
}
