//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// writeReport writes the report (bench.md) and its chart (bench.svg) into
// dir, made when missing, or into a new temporary directory when dir is
// "", and returns the directory. It never replaces a file: when either
// exists in dir it writes nothing and says so, so that a run cannot
// overwrite the published figures (docs/bench.md and docs/bench.svg are
// copied from a run's directory by hand).
func writeReport(dir, md, svg string) (string, error) {
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "fifobench-report-"); err != nil {
			return "", fmt.Errorf("make the report's directory: %w", err)
		}
	} else if err = os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make the report's directory: %w", err)
	}
	files := []struct{ name, content string }{{"bench.md", md}, {"bench.svg", svg}}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if _, err := os.Lstat(path); err == nil {
			return "", fmt.Errorf("%s exists: fifobench does not replace a report (give -out a new directory, or none for a temporary one)", path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	for _, f := range files {
		if err := writeNew(filepath.Join(dir, f.name), f.content); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// writeNew writes content into path, which it creates: it fails when path
// exists.
func writeNew(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
