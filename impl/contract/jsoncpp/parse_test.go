package jsoncpp

import (
	"reflect"
	"strings"
	"testing"
)

func TestJSONCheckPointsMatchJsoncpp(t *testing.T) {
	// Numbers jsoncpp reads as doubles are re-serialized with %.17g (+".0").
	for _, c := range []struct {
		f    float64
		want string
	}{{1, "1.0"}, {1000, "1000.0"}, {1e17, "1e+17"}, {1.5, "1.5"}, {0.1, "0.10000000000000001"}, {1e16, "10000000000000000.0"}} {
		if got := string(AppendDouble(nil, c.f)); got != c.want {
			t.Errorf("%v: %q, want %q", c.f, got, c.want)
		}
	}
	// jsoncpp's lenient code point reading of invalid UTF-8.
	for in, want := range map[string]string{
		"\xff":             `"\ufffd"`,
		"\xc3":             `"\ufffd"`,
		"\xc3A":            `"\u00c1"`, // continuation bytes are not checked
		"\x80A":            `"\ufffd"`, // a stray continuation takes the next byte with it
		"\xed\xa0\x80":     `"\ufffd"`,
		"\xc0\x80":         `"\ufffd"`,
		"\xf4\x90\x80\x80": `"\ud800\udc00"`, // U+110000: the surrogate pair wraps to U+10000
		"a/\x7f<":          `"a/` + "\x7f" + `<"`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestParseJSONDepth(t *testing.T) {
	ok := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	if _, _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("1000 levels: %v", err.Reason(nil))
	}
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	if _, _, err := Parse([]byte(deep)); err == nil || !err.Fatal() {
		t.Fatalf("1001 levels: %+v", err)
	}
	v, _, err := Parse([]byte(`{"b":1,"a":{"y":null,"x":[true,false]},"b":-2}`))
	if err != nil {
		t.Fatal(err.Reason(nil))
	}
	if got := string(Append(nil, &v)); got != `{"a":{"x":[true,false],"y":null},"b":-2}` {
		t.Fatalf("re-serialized %s", got)
	}
	if !reflect.DeepEqual(v.Obj[1].Value, Value{Kind: Int, Int64: -2}) {
		t.Fatalf("last duplicate does not win: %+v", v.Obj[1].Value)
	}
}
