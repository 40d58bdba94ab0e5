//go:build linux

package config

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// modeValue is a file mode written in octal, like 0660.
type modeValue os.FileMode

func (m *modeValue) String() string { return fmt.Sprintf("%#o", os.FileMode(*m)) }

func (m *modeValue) Set(s string) error {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || v > 0o777 {
		return fmt.Errorf("want an octal mode such as 0660")
	}
	*m = modeValue(v)
	return nil
}

// sizeValue is a byte count: 1048576, 64KiB, 1MiB, 1M, 2GiB; at most
// maxSize.
type sizeValue int

// maxSize is the largest sizeValue: 2GiB, or one byte less where an int
// has 32 bits (386, arm, mips, mipsle).
const maxSize = min(1<<31, math.MaxInt)

func (z *sizeValue) String() string { return strconv.Itoa(int(*z)) }

func (z *sizeValue) Set(s string) error {
	units := []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	num, mult := strings.TrimSpace(s), 1
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 || v > maxSize/mult {
		return fmt.Errorf("want a positive size such as 1048576, 64KiB or 1MiB")
	}
	*z = sizeValue(v * mult)
	return nil
}
