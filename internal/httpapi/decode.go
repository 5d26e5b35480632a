package httpapi

import (
	"bytes"
	"mime"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/apperr"
	"github.com/contentapi/contentapi/internal/jsonbody"
)

// decodeJSON reads the request body into v strictly (jsonbody.Decode): every endpoint with a
// JSON body decodes it here. A body not declared as JSON is refused first (jsonMediaType).
func decodeJSON(c *fiber.Ctx, v any) error {
	if err := jsonMediaType(c); err != nil {
		return err
	}
	return jsonbody.Decode(c.Body(), v)
}

// decodeOptionalJSON is decodeJSON for endpoints whose fields are all optional: an empty
// body (no bytes, or only whitespace) leaves v as it is, as {} would.
func decodeOptionalJSON(c *fiber.Ctx, v any) error {
	if emptyBody(c) {
		return nil
	}
	return decodeJSON(c, v)
}

func emptyBody(c *fiber.Ctx) bool { return len(bytes.TrimSpace(c.Body())) == 0 }

// jsonMediaType refuses, with 415 UNSUPPORTED_MEDIA_TYPE, a body whose Content-Type is not
// JSON (application/json or application/*+json, with charset utf-8 if any) or that has no
// Content-Type: a form or text body is a client bug that would otherwise surface as a
// confusing JSON syntax error, or worse, be accepted. An empty body has no media type to
// refuse, whatever its Content-Type says (curl -d "" sends a form type); the endpoint
// judges it as missing.
func jsonMediaType(c *fiber.Ctx) error {
	if emptyBody(c) {
		return nil
	}
	declared := strings.TrimSpace(c.Get(fiber.HeaderContentType))
	if declared == "" {
		return apperr.New(apperr.UnsupportedMediaType, "The request has a body but no Content-Type; send it as JSON with Content-Type: application/json.")
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || !(mt == fiber.MIMEApplicationJSON || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return apperr.New(apperr.UnsupportedMediaType, "Content-Type %q is not JSON; send the body as JSON with Content-Type: application/json.", clip(declared, 100))
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return apperr.New(apperr.UnsupportedMediaType, "charset %q is not accepted; JSON bodies are UTF-8 (charset=utf-8, or no charset).", clip(cs, 40))
	}
	return nil
}

// clip shortens a caller's value before it is echoed in a message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
