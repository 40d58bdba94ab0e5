package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// victimLine is a request as send writes it: id and reply first, stdin of
// n bytes.
func victimLine(t *testing.T, n int) []byte {
	t.Helper()
	obj, err := json.Marshal(Request{ID: "victim-id", Reply: "victim-reply", Stdin: strings.Repeat("s", n)})
	require.NoError(t, err)
	return WireLine(obj)
}

// lines splits what a reader of the input FIFO gets into its lines,
// blank ones left out.
func lines(wire []byte) [][]byte {
	var out [][]byte
	for _, l := range SplitLines(wire) {
		if !IsBlank(l) {
			out = append(out, l)
		}
	}
	return out
}

// A line that fits one atomic write is written as it is; a longer one
// is sealed, padded to whole pieces, and parses back to what was sealed,
// at every length around the pieces' and the size's boundaries.
func TestWireLine(t *testing.T) {
	short := []byte(`{"id":"a","stdin":"hi"}`)
	require.Equal(t, "\n"+string(short)+"\n", string(WireLine(short)))

	base := len(`{"id":"victim-id","reply":"victim-reply","stdin":""}`)
	for _, total := range []int{MaxUnsealed - 1, MaxUnsealed, MaxUnsealed + 1, PipeBuf, 2*PipeBuf - 100,
		2 * PipeBuf, 9_990, 9_999, 10_000, 10_010, 99_990, 100_000, 100_047, 1 << 20} {
		for _, d := range []int{-3, -2, -1, 0, 1, 2} {
			n := total + d - base
			wire := victimLine(t, n)
			ls := lines(wire)
			require.Len(t, ls, 1, "stdin of %d bytes", n)
			r, err := ParseRequest(ls[0])
			require.NoError(t, err, "stdin of %d bytes", n)
			require.Equal(t, n, len(r.Stdin))
			require.Equal(t, "victim-reply", r.Reply)
			if len(wire) > PipeBuf {
				require.Zero(t, len(wire)%PipeBuf, "a sealed line is whole pieces")
				require.True(t, bytes.HasPrefix(wire, []byte("\n"+sealSize)))
			} else {
				require.LessOrEqual(t, len(ls[0]), MaxUnsealed)
			}
		}
	}
	empty := WireLine([]byte(`{}`))
	require.Equal(t, "\n{}\n", string(empty))
}

// splice puts insert between the pieces i and i+1 of wire, as another
// writer's write that came while the victim's write waited for room.
func splice(wire []byte, i int, insert string) []byte {
	at := (i + 1) * PipeBuf
	return append(append(append([]byte(nil), wire[:at]...), insert...), wire[at:]...)
}

// The splices of issue 26's attacker, between every two pieces of a
// victim's 100 KB request: the victim's own line is refused as damaged,
// and a line names the victim's reply when, and only when, it begins with
// the victim's first piece. (A line the attacker makes around a later
// piece, unsealed, may be taken: seal.go says what that leaves open.)
func TestSealRefusesSplices(t *testing.T) {
	wire := victimLine(t, 100_000)
	pieces := len(wire) / PipeBuf
	for _, insert := range []string{
		`","reply":"att","x":"`, // a duplicate reply
		`","REPLY":"att","x":"`, // the same, as encoding/json matches keys
		`\nINJECTED"}` + "\n" + `{"id":"q","reply":"att","stdin":"`,   // a split line, the attacker's text in the victim's
		"\nINJECTED\"}\n{\"id\":\"q\",\"reply\":\"att\",\"stdin\":\"", // a line cut
		"\n",          // the victim's pieces as plain lines
		"\nx\n",       // the same
		"\n{\"x\":\"", // a line of the attacker's own around them
	} {
		for i := range pieces - 1 {
			name := fmt.Sprintf("%q after piece %d", insert, i)
			for _, l := range lines(splice(wire, i, insert)) {
				r, err := ParseRequest(l)
				if strings.Contains(insert, string(l)) {
					continue // the attacker's own line, with none of the victim's bytes
				}
				if bytes.HasPrefix(l, wire[1:PipeBuf]) {
					// The victim's own line, spliced: refused.
					require.ErrorIs(t, err, ErrDamaged, "%s: line %.80q accepted", name, l)
					require.Equal(t, "victim-reply", r.Reply, name)
				} else {
					// A line around later pieces: unsealed, it may be
					// taken (seal.go), but it never names the victim's
					// reply.
					require.NotEqual(t, "victim-reply", r.Reply, "%s: %.80q", name, l)
				}
			}
		}
	}
	// Cut short after any piece, the victim's line is refused, still
	// naming the victim's reply (the agent then removes it: its sender
	// learns at once).
	for i := range pieces - 1 {
		l := wire[1 : (i+1)*PipeBuf]
		r, err := ParseRequest(l)
		require.ErrorIs(t, err, ErrDamaged)
		require.Equal(t, "victim-reply", r.Reply)
	}
}

// A writer who frames the victim's pieces as a line of its own with a
// seal of its own cannot match the digest of bytes it did not read.
func TestSealRefusesForgedSeal(t *testing.T) {
	wire := victimLine(t, 20_000)
	middle := string(wire[PipeBuf : 3*PipeBuf])
	own := []byte(`{"id":"q","reply":"att","stdin":"` + middle + `"}`)
	sealed := lines(WireLine(own))[0]
	_, err := ParseRequest(sealed)
	require.NoError(t, err, "a line sealed whole is taken")
	// The attacker's seal on its guess of the victim's bytes, then the
	// victim's real bytes: the size matches, the digest does not.
	guess := []byte(`{"id":"q","reply":"att","stdin":"` + strings.Repeat("?", len(middle)) + `"}`)
	forged := lines(WireLine(guess))[0]
	at := bytes.Index(forged, []byte(`"stdin":"`)) + len(`"stdin":"`)
	copy(forged[at:], middle)
	_, err = ParseRequest(forged)
	require.ErrorIs(t, err, ErrDamaged)
	require.ErrorContains(t, err, "sha256")
}

func TestSealErrors(t *testing.T) {
	line := lines(victimLine(t, 10_000))[0]
	for name, l := range map[string][]byte{
		"size leading zero": bytes.Replace(line, []byte(`"size":`), []byte(`"size":0`), 1),
		"size too big":      bytes.Replace(line, []byte(`"size":`), []byte(`"size":99999999999`), 1),
		"upper-case hex":    upperDigest(line),
		"cut":               line[:len(line)-1],
		"one more":          append(append([]byte(nil), line...), ' '),
		"one byte changed":  bytes.Replace(line, []byte("ss"), []byte("st"), 1),
		"short, bad seal":   []byte(`{"size":12,"sha256":"00"}`),
	} {
		_, err := ParseRequest(l)
		require.ErrorIs(t, err, ErrDamaged, name)
		_, err = ParseAsk(l)
		require.ErrorIs(t, err, ErrDamaged, name)
	}
	// A long line without a seal is taken, as the exec protocol takes a
	// line written by hand: only one that carries a seal must match it.
	for name, l := range map[string][]byte{
		"unsealed": append([]byte(`{"id":"a","stdin":"`), append(bytes.Repeat([]byte("x"), MaxUnsealed), `"}`...)...),
		"plain":    bytes.Repeat([]byte("p"), MaxUnsealed+1),
	} {
		_, err := ParseRequest(l)
		require.NoError(t, err, name)
	}
	// A short line may carry a seal: it must match.
	ok := []byte(`{"id":"a","stdin":"x"}`)
	sealed := sealForTest(ok)
	_, err := ParseRequest(sealed)
	require.NoError(t, err)
	_, err = ParseRequest(append(sealed[:len(sealed)-1:len(sealed)-1], '}', ' '))
	require.ErrorIs(t, err, ErrDamaged)
	_, err = ParseRequest(line)
	require.NoError(t, err)
}

// upperDigest is line with its seal's digest in upper case.
func upperDigest(line []byte) []byte {
	b := append([]byte(nil), line...)
	at := bytes.Index(b, []byte(sealDigest)) + len(sealDigest)
	copy(b[at:], bytes.ToUpper(b[at:at+digestLen]))
	return b
}

// sealForTest seals obj without padding it, as a hand-written client may.
func sealForTest(obj []byte) []byte {
	body := append([]byte{','}, obj[1:]...)
	sum := sha256.Sum256(body)
	for d := 1; ; d++ {
		size := len(sealSize) + d + len(sealDigest) + digestLen + 1 + len(body)
		if len(strconv.Itoa(size)) == d {
			return fmt.Appendf(nil, `{"size":%d,"sha256":"%s"%s`, size, hexDigest(sum), body)
		}
	}
}

func TestDuplicateKeys(t *testing.T) {
	for _, line := range []string{
		`{"id":"v","reply":"vic","stdin":"a","reply":"att","x":"b"}`,
		`{"id":"v","reply":"vic","Reply":"att"}`,
		`{"id":"v","reply":"vic","re\u0070ly":"att"}`,
		`{"id":"v","reply":"vic","REPLY":"att"}`,
		`{"id":"v","id":"w"}`,
		`{"x":1,"y":[{"x":2}],"x":3}`,
		`{"ſtdin":"a","stdin":"b"}`, // U+017F folds to s, as encoding/json matches it
		`{"K":1,"k":2}`,             // U+212A KELVIN SIGN folds to k
	} {
		_, err := ParseRequest([]byte(line))
		require.ErrorIs(t, err, ErrDamaged, line)
		require.ErrorContains(t, err, "given twice", line)
		_, err = ParseAsk([]byte(line))
		require.ErrorIs(t, err, ErrDamaged, line)
	}
	for _, line := range []string{
		`{"id":"v","reply":"vic","stdin":"\"reply\":\"att\""}`,
		`{"args":["reply","reply"],"x":{"reply":1,"reply":2}}`,
		`{"a\\":1,"a":2}`,
		`{"id":"v","ids":"w","i d":"x"}`,
	} {
		_, err := ParseRequest([]byte(line))
		require.NotErrorIs(t, err, ErrDamaged, line)
	}
	// Salvaged from a damaged line: the first of each, as the line's
	// first write named it.
	r, err := ParseRequest([]byte(`{"id":"v","reply":"vic","stdin":"a","reply":"att","id":"w"}`))
	require.ErrorIs(t, err, ErrDamaged)
	require.Equal(t, "v", r.ID)
	require.Equal(t, "vic", r.Reply)
}
