package status

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestAppendJSONIsMarshal: AppendJSON writes JSON that decodes to what
// json.Marshal's encoding decodes to, for statuses with every field filled
// in at random (so a field added to Status but not to AppendJSON fails
// here), pointers nil or not, and strings full of what JSON must escape and
// of invalid UTF-8 (which both make U+FFFD).
func TestAppendJSONIsMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var s Status
		fill(rng, reflect.ValueOf(&s).Elem())
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := s.AppendJSON(nil)
		var gotV, wantV any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatalf("case %d: %s is not JSON: %v", i, got, err)
		}
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// fill sets v, and everything in it, to random values.
func fill(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			zones := []*time.Location{time.UTC, time.FixedZone("", -7*3600-1800), time.Local}
			t := time.Unix(rng.Int64N(1<<34), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
			if rng.IntN(4) == 0 {
				t = time.Time{}
			}
			v.Set(reflect.ValueOf(t))
			return
		}
		for i := range v.NumField() {
			fill(rng, v.Field(i))
		}
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			return // nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(rng, v.Elem())
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Int, reflect.Int64:
		v.SetInt(rng.Int64() >> rng.IntN(64))
		if rng.IntN(2) == 0 {
			v.SetInt(-v.Int())
		}
	case reflect.Uint64:
		v.SetUint(rng.Uint64() >> rng.IntN(64))
	default:
		panic("fill: no case for " + v.Type().String())
	}
}

func randomString(rng *rand.Rand) string {
	pieces := []string{"", "a", "/run/fifobridge/in", " ", `"`, `\`, "<", ">", "&", "\x00", "\x01", "\b", "\f", "\n",
		"\r", "\t", "\x1f", "\x7f", "é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xc3", "🙂", "\ufffd"}
	var b []byte
	for range rng.IntN(8) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}
