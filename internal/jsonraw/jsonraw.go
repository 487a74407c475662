// Package jsonraw writes JSON that keeps the exact bytes of strings that are not UTF-8.
//
// A JSON string is Unicode; a file name is bytes. encoding/json writes each byte of a string that is not
// UTF-8 as U+FFFD, so a run folder named in Latin-1 ("r\xe9sultats") came out as "r\ufffdsultats" and could
// not be found again. Marshal keeps the string member as json.Marshal writes it (readers that ignore the
// rest see what they saw before) and adds beside it the member NAME_base64 (RawSuffix) with the exact
// bytes: for a string member "dir", "dir_base64": its bytes in standard base64; for an array of strings
// "runs", "runs_base64": an array of the same length, null where the string is valid UTF-8. An output whose
// strings are all valid UTF-8 is byte for byte what json.Marshal writes.
//
//	b, err := jsonraw.Marshal(map[string]string{"dir": "runs/r\xe9sultats"})
//	// {"dir":"runs/r\ufffdsultats","dir_base64":"cnVucy9y6XN1bHRhdHM="}
package jsonraw

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// RawSuffix ends the name of the member that holds a string's exact bytes.
const RawSuffix = "_base64"

// IndistinctError reports two different strings that JSON writes alike (they differ only in bytes that are
// not UTF-8), so that their NAME_base64 members could not be told apart.
type IndistinctError struct{ A, B string }

func (e *IndistinctError) Error() string {
	return fmt.Sprintf("%s and %s differ only in bytes that are not UTF-8, which a JSON string cannot tell apart (rename one)",
		quote(e.A), quote(e.B))
}

// KeyError reports a map key that is not UTF-8: a JSON object's member names have no NAME_base64.
type KeyError struct{ Key string }

func (e *KeyError) Error() string {
	return fmt.Sprintf("the key %s is not UTF-8, which a JSON object cannot hold", quote(e.Key))
}

// quote is s quoted, its first 40 bytes only when it is longer.
func quote(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// Marshal is json.Marshal of v with the NAME_base64 member added beside every member whose string (or array
// of strings) is not valid UTF-8 in v. Two different strings that JSON writes alike are an
// *IndistinctError, a map key that is not UTF-8 a *KeyError.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return keepRawStrings(b, v)
}

// MarshalIndent is Marshal indented as json.MarshalIndent indents.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, prefix, indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// keepRawStrings returns b, the JSON encoding of v, with the NAME_base64 members added.
func keepRawStrings(b []byte, v any) ([]byte, error) {
	raw := map[string]string{} // the JSON form of a string -> its bytes
	invalid := false
	var walk func(x reflect.Value, depth int) error
	note := func(s string) error {
		if utf8.ValidString(s) {
			if strings.ContainsRune(s, utf8.RuneError) {
				// A U+FFFD of its own: it must not be taken for another string's replacement, whichever of
				// the two is met first (a map's order is random).
				if was, ok := raw[s]; ok && was != s {
					return &IndistinctError{A: was, B: s}
				}
				raw[s] = s
			}
			return nil
		}
		invalid = true
		shown := lossyJSON(s)
		if was, ok := raw[shown]; ok && was != s {
			return &IndistinctError{A: was, B: s}
		}
		raw[shown] = s
		return nil
	}
	walk = func(x reflect.Value, depth int) error {
		if depth > 64 || !x.IsValid() {
			return nil
		}
		switch x.Kind() {
		case reflect.String:
			return note(x.String())
		case reflect.Pointer, reflect.Interface:
			if !x.IsNil() {
				return walk(x.Elem(), depth+1)
			}
		case reflect.Struct:
			for i := range x.NumField() {
				if err := walk(x.Field(i), depth+1); err != nil {
					return err
				}
			}
		case reflect.Map:
			it := x.MapRange()
			for it.Next() {
				if k := it.Key(); k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
					return &KeyError{Key: k.String()}
				}
				if err := walk(it.Value(), depth+1); err != nil {
					return err
				}
			}
		case reflect.Slice, reflect.Array:
			if x.Type().Elem().Kind() == reflect.Uint8 {
				return nil // []byte: base64 already
			}
			for i := range x.Len() {
				if err := walk(x.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(reflect.ValueOf(v), 0); err != nil || !invalid {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tree, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	tree.write(&out, raw)
	return out.Bytes(), nil
}

// lossyJSON is s as its JSON string decodes (json.Marshal writes U+FFFD for each byte that is not UTF-8).
func lossyJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// jsonNode is a JSON value with its objects' members in order.
type jsonNode struct {
	kind  byte   // '{', '[', '"', '0' (number), 'b' (true or false), 'n' (null)
	text  string // a string, a number's digits, "true" or "false"
	keys  []string
	elems []*jsonNode // an object's values (by keys) or an array's elements
}

// readNode reads one JSON value.
func readNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jsonNode{kind: byte(t)}
		for dec.More() {
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			e, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, e)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &jsonNode{kind: '"', text: t}, nil
	case json.Number:
		return &jsonNode{kind: '0', text: string(t)}, nil
	case bool:
		return &jsonNode{kind: 'b', text: fmt.Sprint(t)}, nil
	case nil:
		return &jsonNode{kind: 'n'}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// write writes n as json.Marshal does (compact, the same escapes), with the NAME_base64 members.
func (n *jsonNode) write(w *bytes.Buffer, raw map[string]string) {
	str := func(s string) {
		b, _ := json.Marshal(s)
		w.Write(b)
	}
	switch n.kind {
	case '{':
		w.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			str(k)
			w.WriteByte(':')
			n.elems[i].write(w, raw)
			if sib := n.elems[i].rawSibling(raw); sib != nil && !slices.Contains(n.keys, k+RawSuffix) {
				w.WriteByte(',')
				str(k + RawSuffix)
				w.WriteByte(':')
				sib.write(w, raw)
			}
		}
		w.WriteByte('}')
	case '[':
		w.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				w.WriteByte(',')
			}
			e.write(w, raw)
		}
		w.WriteByte(']')
	case '"':
		str(n.text)
	case 'n':
		w.WriteString("null")
	default:
		w.WriteString(n.text)
	}
}

// rawSibling returns the NAME_base64 value of a member whose value is n: the base64 bytes of a string
// that is not UTF-8, or for an array holding such strings an array of them (null for the others); nil
// when n holds none.
func (n *jsonNode) rawSibling(raw map[string]string) *jsonNode {
	enc := func(e *jsonNode) *jsonNode {
		if e.kind == '"' {
			if s, ok := raw[e.text]; ok && s != e.text {
				return &jsonNode{kind: '"', text: base64.StdEncoding.EncodeToString([]byte(s))}
			}
		}
		return nil
	}
	switch n.kind {
	case '"':
		return enc(n)
	case '[':
		out := &jsonNode{kind: '['}
		found := false
		for _, e := range n.elems {
			r := enc(e)
			found = found || r != nil
			out.elems = append(out.elems, cmp.Or(r, &jsonNode{kind: 'n'}))
		}
		if found {
			return out
		}
	}
	return nil
}
