//go:build linux

package cgroup

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fifobridge/fifobridge/cgroup/cgrouptest"
)

// TestCgroupPrepare: Prepare makes one cgroup that no child used,
// once, and the next New hands it out; a second Prepare while it waits
// makes nothing; Close removes a prepared cgroup, and Prepare after Close
// makes none.
func TestCgroupPrepare(t *testing.T) {
	dir := cgrouptest.Dir(t, Own)
	m, err := Open(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	anchor := filepath.Base(m.anchor)
	if left := cgrouptest.Below(t, dir); !slices.Equal(left, []string{anchor}) {
		t.Fatalf("cgroups before Prepare: %v, want the anchor alone", left)
	}
	if err := m.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := m.Prepare(); err != nil {
		t.Fatal(err)
	}
	made := slices.DeleteFunc(cgrouptest.Below(t, dir), func(n string) bool { return n == anchor })
	if len(made) != 1 {
		t.Fatalf("two Prepares made %v, want one cgroup", made)
	}
	if procs := cgroupProcs(filepath.Join(dir, made[0])); len(procs) != 0 {
		t.Errorf("prepared cgroup holds %v", procs)
	}
	c, err := m.New()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(c.Path()) != made[0] {
		t.Errorf("New made %s, want the prepared %s", c.Path(), made[0])
	}
	if left := cgrouptest.Below(t, dir); len(left) != 2 {
		t.Errorf("New made another cgroup: %v", left)
	}
	c.Remove()
	if err := m.Prepare(); err != nil {
		t.Fatal(err)
	}
	prepared := slices.DeleteFunc(cgrouptest.Below(t, dir), func(n string) bool { return n == anchor })
	if len(prepared) != 1 || prepared[0] == made[0] {
		t.Fatalf("after the first was used and removed, Prepare made %v", prepared)
	}
	m.Close()
	if left := cgrouptest.Below(t, dir); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}
	if err := m.Prepare(); err != nil {
		t.Fatal(err)
	}
	if left := cgrouptest.Below(t, dir); len(left) != 0 {
		t.Errorf("Prepare after Close made %v", left)
	}
	if c, err := m.New(); err == nil {
		t.Errorf("New after Close made %s", c.Path())
	}
}
