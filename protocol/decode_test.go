package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32, item 1: the seal is framing. Every kind of line means the
// same sealed as not: the seal's "size" is never a control line's
// terminal size, and a line's own "size" or "sha256" is never a second
// of the seal's keys.
func TestSealIsFraming(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 640) // 10 KB
	env := "BIG=" + strings.Repeat("fedcba9876543210", 384)
	open, err := json.Marshal(Control{ID: "o1", Reply: "R", Op: OpOpen, Session: "sh1", Size: "100x30",
		Args: []string{"-c", "x", big}, Env: []string{env}})
	require.NoError(t, err)
	c, err := ParseControl(lines(WireLine(open))[0])
	require.NoError(t, err, "a sealed open")
	assert.Equal(t, "100x30", c.Size)
	assert.Equal(t, []string{"-c", "x", big}, c.Args)
	assert.Equal(t, []string{env}, c.Env)
	assert.Equal(t, "R", c.Reply)

	for name, line := range map[string]string{
		"control, short list":       `{"id":"l1","reply":"R","op":"list"}`,
		"control, own size":         `{"id":"o1","reply":"R","op":"open","session":"s","tty":true,"size":"80x24"}`,
		"control, own size first":   `{"size":"80x24","id":"o1","reply":"R","op":"open","session":"s"}`,
		"control, own SHA256":       `{"id":"l1","reply":"R","op":"list","SHA256":"x"}`,
		"request, own size":         `{"id":"r1","reply":"R","stdin":"hi","size":"80x24"}`,
		"request, own Size, sha256": `{"id":"r1","reply":"R","stdin":"hi","Size":7,"sha256":"x"}`,
		"request, only the seal":    `{}`,
		"ask, own size":             `{"id":"a1","reply":"R","input":"x","size":"80x24"}`,
	} {
		t.Run(name, func(t *testing.T) {
			sealed := sealForTest([]byte(line))
			pad := `"pad":"` + strings.Repeat("p", PipeBuf) + `"}`
			if line != "{}" {
				pad = "," + pad
			}
			long := lines(WireLine([]byte(line[:len(line)-1] + pad)))[0]
			for _, l := range [][]byte{[]byte(line), sealed, long} {
				for kind, parse := range parsers {
					want, wantErr := parse([]byte(line))
					got, err := parse(l)
					if errors.Is(wantErr, ErrDamaged) || errors.Is(err, ErrDamaged) {
						t.Fatalf("%s: %.80s refused as damaged: %v, %v", kind, l, wantErr, err)
					}
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("%s: %.80s: %v; unsealed: %v", kind, l, err, wantErr)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s: %.80s parsed to %+v; unsealed to %+v", kind, l, got, want)
					}
				}
			}
		})
	}
	c, err = ParseControl(sealForTest([]byte(`{"id":"l1","reply":"R","op":"list","size":"80x24"}`)))
	require.NoError(t, err)
	assert.Equal(t, "80x24", c.Size, "the line's own size, not the seal's")
}

// parsers are the three kinds of line, each parsed to a value that
// reflect.DeepEqual compares.
var parsers = map[string]func([]byte) (any, error){
	"request": func(l []byte) (any, error) { return ParseRequest(l) },
	"ask":     func(l []byte) (any, error) { return ParseAsk(l) },
	"control": func(l []byte) (any, error) { return ParseControl(l) },
}

// A sealed line that does not match its seal is refused as damaged,
// whatever kind of line it is; one that matches but is bad JSON is
// refused as bad JSON, at the byte of the line as it was written.
func TestSealedLineErrors(t *testing.T) {
	for kind, parse := range parsers {
		sealed := sealForTest([]byte(`{"id":"x","reply":"R","op":"list","input":"y","stdin":"z"}`))
		_, err := parse(sealed[:len(sealed)-1])
		require.ErrorIs(t, err, ErrDamaged, kind)

		bad := sealForTest([]byte(`{"id":"x","reply":"R",!}`))
		_, err = parse(bad)
		require.NotErrorIs(t, err, ErrDamaged, kind)
		at := strings.IndexByte(string(bad), '!')
		require.ErrorContains(t, err, fmt.Sprintf("bad JSON at byte %d", at+1), kind)

		for _, l := range []string{`{,}`, `{,,"id":"x"}`} {
			_, err = parse(sealForTest([]byte(l)))
			require.Error(t, err, "%s: %s sealed", kind, l)
			require.NotErrorIs(t, err, ErrDamaged, kind)
		}
	}
	// A first key "size" with a number claims a seal; with a string,
	// none.
	_, err := ParseControl([]byte(`{"size":12,"reply":"R","op":"list"}`))
	require.ErrorIs(t, err, ErrDamaged)
	_, err = ParseControl([]byte(`{"size":"12","reply":"R","op":"list"}`))
	require.NoError(t, err)
}

// FuzzSealIsFraming checks that any JSON object, sealed, parses as it
// does unsealed, as every kind of line: taken or refused alike, and taken
// as the same value.
func FuzzSealIsFraming(f *testing.F) {
	for _, seed := range []string{
		`{"id":"o1","reply":"R","op":"open","session":"s","size":"100x30","env":["A=b"]}`,
		`{"size":"80x24","reply":"R","op":"list"}`,
		`{"id":"a1","reply":"R","input":"x","SIZE":"y","Sha256":"z"}`,
		`{"id":"r1","reply":"R","stdin":"x","reply":"att"}`,
		`{}`,
		`{ }`,
		`{,"id":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		if len(obj) == 0 || obj[0] != '{' || hasSeal(obj) {
			return // not a JSON line, or one that claims a seal of its own
		}
		sealed := sealForTest(obj)
		for kind, parse := range parsers {
			want, wantErr := parse(obj)
			got, err := parse(sealed)
			if (err == nil) != (wantErr == nil) || errors.Is(err, ErrDamaged) != errors.Is(wantErr, ErrDamaged) {
				t.Fatalf("%s: %q sealed: %v; unsealed: %v", kind, obj, err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %q sealed parsed to %+v; unsealed to %+v", kind, obj, got, want)
			}
		}
	})
}
