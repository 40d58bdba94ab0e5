package readwait

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FIFOBRIDGE_READ_PROBE=0 turns the probe off at start: NewProbe fails
// with ErrOff; unset or another value, it makes a probe. Each case is a
// test binary of its own, which reads the variable as the agent does.
func TestOffEnv(t *testing.T) {
	if want, ok := os.LookupEnv("READWAIT_TEST_EXPECT"); ok {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		defer r.Close()
		defer w.Close()
		p, err := NewProbe(w)
		if want == "off" {
			assert.ErrorIs(t, err, ErrOff)
			assert.Nil(t, p)
			return
		}
		assert.NoError(t, err)
		assert.NotNil(t, p)
		return
	}
	for _, tc := range []struct{ env, want string }{{"0", "off"}, {"", "on"}, {"1", "on"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOffEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), "READWAIT_TEST_EXPECT="+tc.want, OffEnv+"="+tc.env)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s=%q: want the probe %s\n%s", OffEnv, tc.env, tc.want, out)
	}
}
