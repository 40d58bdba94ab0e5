package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A package's soaks are its tests that reach testing.Short through its
// own functions; the unraced ones those that also reach raceBuild.
func TestShortTests(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import "testing"

var raceBuild bool

func rounds() int {
	if testing.Short() {
		return 1
	}
	return 100
}

func limit() int {
	if raceBuild {
		return 2
	}
	return 1
}

func TestPlain(t *testing.T)       {}
func TestSoak(t *testing.T)        { _ = rounds() }
func TestRacedSoak(t *testing.T)   { _ = rounds() + limit() }
func TestRacedOnly(t *testing.T)   { _ = limit() }
func TestDirect(t *testing.T)      { _ = testing.Short() && raceBuild }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(src), 0o600))

	all, err := shortTests(dir, false)
	require.NoError(t, err)
	require.Equal(t, []string{"TestDirect", "TestRacedSoak", "TestSoak"}, all)

	unraced, err := shortTests(dir, true)
	require.NoError(t, err)
	require.Equal(t, []string{"TestDirect", "TestRacedSoak"}, unraced)
}
