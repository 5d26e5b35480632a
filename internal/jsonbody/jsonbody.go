// Package jsonbody decodes request bodies strictly, with the semantics of encoding/json/v2
// (github.com/go-json-experiment/json, the same code; see docs/decisions.md, "Requests").
// Every endpoint with a JSON body decodes it here, so its rules hold for all of them.
package jsonbody

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/contentapi/contentapi/internal/apperr"
)

// Decode decodes one JSON object into v strictly: member names match exactly (case
// included), an unknown, duplicate or wrongly typed member is refused naming it, and no
// string anywhere in the body may hold invalid UTF-8 or a control character other than tab,
// CR and LF (PostgreSQL cannot store NUL, and none of them means anything in a request).
// Every error is an apperr VALIDATION_ERROR.
func Decode(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return apperr.Invalid("The request body must be a JSON object.")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if err := json.UnmarshalDecode(dec, v, json.RejectUnknownMembers(true)); err != nil {
		return jsonError(err)
	}
	if trimmed[0] != '{' { // null: any other value fails to decode into a struct
		return apperr.Invalid("The request body must be a JSON object.")
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return apperr.Invalid("The request body must be a single JSON object.")
	}
	return checkStrings(body)
}

// errInvalidUTF8 is the error jsontext wraps for invalid UTF-8 in a string; the package does
// not export it, so it is taken from a decode that meets some.
var errInvalidUTF8 = func() error {
	_, err := jsontext.NewDecoder(strings.NewReader("\"\xff\"")).ReadToken()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}()

func jsonError(err error) error {
	var semErr *json.SemanticError
	var synErr *jsontext.SyntacticError
	switch {
	case errors.As(err, &semErr):
		field := fieldName(semErr.JSONPointer)
		switch {
		case errors.Is(semErr.Err, json.ErrUnknownName):
			return apperr.Invalid("unknown field %q", field)
		case field == "":
			return apperr.Invalid("The request body must be a JSON object.")
		case semErr.GoType == nil:
			return apperr.Invalid("%s has an invalid value", field)
		}
		return apperr.Invalid("%s must be %s", field, jsonKind(semErr.GoType))
	case errors.As(err, &synErr):
		field := fieldName(synErr.JSONPointer)
		switch {
		case errors.Is(synErr.Err, jsontext.ErrDuplicateName):
			return apperr.Invalid("duplicate field %q", field)
		case errors.Is(synErr.Err, errInvalidUTF8) && field != "":
			return apperr.Invalid("%s must be valid UTF-8", field)
		case errors.Is(synErr.Err, errInvalidUTF8):
			return apperr.Invalid("The request body must be valid UTF-8.")
		}
		return apperr.Invalid("The request body is not valid JSON (at byte %d).", synErr.ByteOffset)
	}
	return apperr.Invalid("The request body is not valid JSON.")
}

// jsonKind names the JSON kind of t for an error message ("a string", "a number", ...).
func jsonKind(t reflect.Type) string {
	switch Kind(t) {
	case "string":
		return "a string"
	case "integer", "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return "of another type"
}

// Kind is the JSON Schema type a value of Go type t encodes as by its kind (pointers
// followed): string, boolean, integer, number, array or object; "" for any other kind.
func Kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// checkStrings refuses a body whose strings (member names included) hold a control character
// other than tab, CR and LF, naming the field. The body has already been decoded, so it is
// valid JSON and reading it to the end meets only io.EOF.
func checkStrings(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return jsonError(err)
		}
		if tok.Kind() != '"' || !hasControl(tok.String()) {
			continue
		}
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 {
			return apperr.Invalid("field names must not contain NUL or other control characters")
		}
		return apperr.Invalid("%s must not contain NUL or other control characters", fieldName(dec.StackPointer()))
	}
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f {
			return true
		}
	}
	return false
}

// fieldName writes a JSON pointer as the messages name fields: competitors[1], metadata.x.
func fieldName(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "" && b.Len() > 0:
			b.WriteString("[" + tok + "]")
		case b.Len() > 0:
			b.WriteString("." + tok)
		default:
			b.WriteString(tok)
		}
	}
	return b.String()
}
