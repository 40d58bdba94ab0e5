//go:build linux

package config

import (
	"strconv"
	"testing"
)

// TestSizeFlag: sizes up to maxSize are taken, with or without a unit, and
// nothing larger, on 32-bit systems too, where 2GiB does not fit in an int.
func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int{
		"1048576": 1 << 20, "64KiB": 64 << 10, "1MiB": 1 << 20, "1M": 1 << 20, "1GiB": 1 << 30,
		strconv.Itoa(maxSize): maxSize, strconv.Itoa(maxSize>>10) + "KiB": maxSize >> 10 << 10,
	} {
		var z sizeValue
		if err := z.Set(in); err != nil || int(z) != want {
			t.Errorf("%q: got %d, %v; want %d", in, z, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "x", "1T", strconv.Itoa(maxSize>>10+1) + "KiB", "3GiB", "4096MiB", "9223372036854775807"} {
		var z sizeValue
		if err := z.Set(in); err == nil {
			t.Errorf("%q: got %d, want an error", in, z)
		}
	}
	if strconv.IntSize == 64 {
		var z sizeValue
		if err := z.Set("2GiB"); err != nil || int64(z) != 1<<31 {
			t.Errorf("2GiB: got %d, %v", z, err)
		}
	}
}
