package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/jsonbody"
)

// decodeJSON reads the request body into v strictly (jsonbody.Decode): every endpoint with a
// JSON body decodes it here.
func decodeJSON(c *fiber.Ctx, v any) error { return jsonbody.Decode(c.Body(), v) }
