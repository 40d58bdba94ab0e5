//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPublishDefault publishes a report with the default flags from a
// directory that holds published figures in docs/: they stay as they are,
// and the report goes into a new temporary directory.
func TestPublishDefault(t *testing.T) {
	cfg, err := parseFlags(nil)
	require.NoError(t, err)
	cwd, tmp := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("TMPDIR", tmp)
	require.NoError(t, os.Mkdir("docs", 0o755))
	for _, name := range []string{"bench.md", "bench.svg"} {
		require.NoError(t, os.WriteFile(filepath.Join("docs", name), []byte("published"), 0o644))
	}

	b := &bench{config: cfg, tools: map[string]string{}, clientName: "test client"}
	require.NoError(t, b.publish(newResults(), "go run ./cmd/fifobench"))
	for _, name := range []string{"bench.md", "bench.svg"} {
		got, err := os.ReadFile(filepath.Join("docs", name))
		require.NoError(t, err)
		require.Equal(t, "published", string(got), "docs/%s was changed", name)
	}
	dirs, err := filepath.Glob(filepath.Join(tmp, "fifobench-report-*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1, "report directories under TMPDIR")
	md, err := os.ReadFile(filepath.Join(dirs[0], "bench.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "Command: `go run ./cmd/fifobench` (test client")
	require.FileExists(t, filepath.Join(dirs[0], "bench.svg"))
}

// TestWriteReport writes into a directory it is given, made when missing,
// and refuses, writing nothing, where a report is already.
func TestWriteReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "report")
	got, err := writeReport(dir, "md", "svg")
	require.NoError(t, err)
	require.Equal(t, dir, got)
	for name, want := range map[string]string{"bench.md": "md", "bench.svg": "svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, want, string(b))
	}

	for _, existing := range []string{"bench.md", "bench.svg"} {
		t.Run(existing, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, existing), []byte("published"), 0o644))
			_, err := writeReport(dir, "md", "svg")
			require.ErrorContains(t, err, existing+" exists")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "files in the directory")
			b, err := os.ReadFile(filepath.Join(dir, existing))
			require.NoError(t, err)
			require.Equal(t, "published", string(b))
		})
	}
}
