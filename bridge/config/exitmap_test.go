//go:build linux

package config

import "testing"

func TestExitMapSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[int]int // nil: refused
	}{
		{"143=0", map[int]int{143: 0}},
		{"143=0,1=2", map[int]int{143: 0, 1: 2}},
		{" 3 = 30 , 0=9", map[int]int{3: 30, 0: 9}},
		{"1=2,1=2", map[int]int{1: 2}},
		{"1=2,1=3", nil},
		{"143", nil},
		{"143=", nil},
		{"=0", nil},
		{"x=0", nil},
		{"256=0", nil},
		{"0=-1", nil},
		{"1=2,,3=4", nil},
		{"", nil},
	} {
		var m ExitMap
		err := m.Set(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("Set(%q) = %v, want an error", tc.in, m)
			}
			continue
		}
		if err != nil || len(m) != len(tc.want) {
			t.Errorf("Set(%q) = %v, %v; want %v", tc.in, m, err, tc.want)
			continue
		}
		for from, to := range tc.want {
			if m.Apply(from) != to {
				t.Errorf("Set(%q): %d maps to %d, want %d", tc.in, from, m.Apply(from), to)
			}
		}
		if m.Apply(77) != 77 {
			t.Errorf("Set(%q): an unmapped code changed", tc.in)
		}
	}
}
