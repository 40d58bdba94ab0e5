package jsonskim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skimsLikeDecoder checks that the skim of the JSON value b (valid,
// whatever it is) agrees with encoding/json: an object's members are its
// keys and values, an array's elements its elements, and Cut leaves what
// decoding it without that key gives. Objects with a key given twice are
// left out: the skim reads the first, encoding/json the last.
func skimsLikeDecoder(t *testing.T, b []byte) {
	t.Helper()
	v := decodeAny(t, b)
	switch v := v.(type) {
	case map[string]any:
		got := map[string]any{}
		written := map[string]string{} // keys as written
		var order []string
		dup := false
		require.NoError(t, Members(b, func(key, value []byte) bool {
			k, err := Text(key)
			require.NoError(t, err)
			_, dup = got[k]
			got[k], written[k] = decodeAny(t, value), string(key[1:len(key)-1])
			order = append(order, k)
			return dup
		}))
		if dup {
			return
		}
		require.Equal(t, v, got)
		for j, k := range order {
			head, found, err := Head(b, written[k])
			require.NoError(t, err)
			require.True(t, found)
			before := map[string]any{}
			for _, kk := range order[:j] {
				before[kk] = v[kk]
			}
			require.Equal(t, before, decodeAny(t, head), "%s before %q: %s", b, k, head)
		}
		for k := range v {
			rest, value, found, err := Cut(b, written[k])
			require.NoError(t, err)
			require.True(t, found, "key %q of %s", written[k], b)
			left, ok := decodeAny(t, rest).(map[string]any)
			require.True(t, ok, "%s without %q: %s", b, k, rest)
			assert.Equal(t, v[k], decodeAny(t, value))
			want := map[string]any{}
			for kk, vv := range v {
				if kk != k {
					want[kk] = vv
				}
			}
			assert.Equal(t, want, left)
		}
	case []any:
		var got []any
		require.NoError(t, Elements(b, func(elem []byte) bool {
			got = append(got, decodeAny(t, elem))
			return false
		}))
		objects := make([]map[string]any, len(v))
		count, err := ElementMembers(b, func(n int, key, value []byte) {
			if objects[n] == nil {
				objects[n] = map[string]any{}
			}
			k, err := Text(key)
			require.NoError(t, err)
			objects[n][k] = decodeAny(t, value)
		})
		if err == nil {
			require.Len(t, v, count)
		}
		for n, e := range v {
			if o, ok := e.(map[string]any); !ok {
				require.Error(t, err, "element %d of %s is no object", n, b)
				break
			} else if len(o) > 0 && err == nil {
				require.Equal(t, o, objects[n], "element %d of %s", n, b) // a key given twice aside
			}
		}
		if len(v) == 0 {
			require.Empty(t, got)
			return
		}
		require.Equal(t, v, got)
	}
}

// decodeAny decodes the valid JSON b, numbers as written.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v), "%s", b)
	return v
}

func TestSkim(t *testing.T) {
	for _, b := range []string{
		`{}`, ` { } `, `[]`, `[ ]`,
		`{"a":1,"b":"x","c":null,"d":true,"e":[1,{"f":"}"}],"g":{"h":"]\"["}}`,
		"{\n  \"a\" : [ 1 , 2 ] ,\n  \"b\" : { \"c\" : \"\\\\\" }\n}",
		`{"sessions":[{"name":"a"},{"name":"b"}],"pid":3}`,
		`{"pid":3,"sessions":[]}`,
		`{"only":"one"}`,
		`[{"name":"a","x":[[],{}]},"s",1.5e3,-2,null,false,{"k\"ey":"v"}]`,
		`{"\u0061":1,"a\\b":2}`,
	} {
		t.Run(b, func(t *testing.T) { skimsLikeDecoder(t, []byte(b)) })
	}
}

// What a skim can tell is not JSON fails, and never reads past the end.
func TestSkimRefuses(t *testing.T) {
	obj := `{"a":[1,{"b":"c"}],"d":"e\"f"}`
	for i := range len(obj) {
		rest, _, _, err := Cut([]byte(obj[:i]), "d")
		assert.True(t, err != nil || !json.Valid(rest), "%s", obj[:i])
		assert.Error(t, Members([]byte(obj[:i]), func(_, _ []byte) bool { return false }), "%s", obj[:i])
	}
	for _, b := range []string{``, `[`, `x`, `{"a"}`, `{"a":}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":1,}x`, `"a`} {
		assert.Error(t, Members([]byte(b), func(_, _ []byte) bool { return false }), "%s", b)
	}
	for _, b := range []string{``, `{`, `[1 2]`, `[1,`, `["a]`, `[{]`} {
		assert.Error(t, Elements([]byte(b), func([]byte) bool { return false }), "%s", b)
	}
}

// Find and Cut stop at the first member of the key: what follows it is
// not skimmed.
func TestFindFirst(t *testing.T) {
	v, found, err := Find([]byte(`{"a":1,"b":[2],"b":3,"c":`), "b")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, `[2]`, string(v))
	_, found, err = Find([]byte(`{"a":1}`), "b")
	require.NoError(t, err)
	require.False(t, found)
	rest, _, found, err := Cut([]byte(`{"a":1}`), "b")
	require.NoError(t, err)
	require.False(t, found)
	require.Equal(t, `{"a":1}`, string(rest))
}

func TestText(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "tab\t", "é", "\u2028", "<&>"} {
		b, err := json.Marshal(s)
		require.NoError(t, err)
		got, err := Text(b)
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := Text([]byte(`"open`))
	require.Error(t, err)
	_, err = Text([]byte(`1`))
	require.Error(t, err)
}

// Whatever the bytes, a skim neither panics nor reads past them, and of
// valid JSON it agrees with encoding/json.
func FuzzSkim(f *testing.F) {
	for _, b := range []string{`{"a":[1,{"b":"}"}],"c":"\"\\"}`, `[{"name":"x"},2]`, `{"sessions":[]}`, `{"a":`, `"\`} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		Members(b, func(_, _ []byte) bool { return false })
		Elements(b, func([]byte) bool { return false })
		Cut(b, "a")
		Head(b, "a")
		ElementMembers(b, func(int, []byte, []byte) {})
		if json.Valid(b) {
			skimsLikeDecoder(t, b)
		}
	})
}

// Head closes an object before a member, of a whole object or of its
// first bytes alone.
func TestHead(t *testing.T) {
	for _, tc := range []struct{ obj, head string }{
		{`{"a":1,"s":[{"x":"}"}],"b":2}`, `{"a":1}`},
		{`{"s":[1]}`, `{}`},
		{`{ "a" : {"s":1} , "s" : [`, `{ "a" : {"s":1}}`},
		{`{"a":"\"s\":","s":`, `{"a":"\"s\":"}`},
	} {
		head, found, err := Head([]byte(tc.obj), "s")
		require.NoError(t, err, tc.obj)
		require.True(t, found, tc.obj)
		require.Equal(t, tc.head, string(head))
		require.True(t, json.Valid(head))
	}
	head, found, err := Head([]byte(`{"a":1,"b":[2]}`), "s")
	require.NoError(t, err)
	require.False(t, found)
	require.Equal(t, `{"a":1,"b":[2]}`, string(head))
	for _, cut := range []string{`{"a":1,"b`, `{"a":[1,`, `{"a":1`, `{"a":1,}`, `[`, ``} {
		_, _, err := Head([]byte(cut), "s")
		require.Error(t, err, cut)
	}
}

// ElementMembers gives what Elements and then Members of each give.
func TestElementMembers(t *testing.T) {
	arr := []byte(`[{"a":1,"b":{"c":[2]}}, {} ,{"d":"]}"}]`)
	type member struct {
		n          int
		key, value string
	}
	var want, got []member
	n := 0
	require.NoError(t, Elements(arr, func(elem []byte) bool {
		require.NoError(t, Members(elem, func(key, value []byte) bool {
			want = append(want, member{n, string(key), string(value)})
			return false
		}))
		n++
		return false
	}))
	count, err := ElementMembers(arr, func(n int, key, value []byte) {
		got = append(got, member{n, string(key), string(value)})
	})
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, 3, count)
	require.Equal(t, 2, got[len(got)-1].n)
	count, err = ElementMembers([]byte(` [ ] `), func(int, []byte, []byte) { t.Fatal("no element") })
	require.NoError(t, err)
	require.Zero(t, count)
	for _, bad := range []string{`[1]`, `[{"a":1},]`, `[{"a":1}`, `{}`, `[{"a":1} {"b":2}]`} {
		_, err := ElementMembers([]byte(bad), func(int, []byte, []byte) {})
		require.Error(t, err, bad)
	}
}
