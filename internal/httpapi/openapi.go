package httpapi

import (
	"net/url"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/contentapi/contentapi/internal/openapi"
)

// openapiDocument serves the OpenAPI document, its servers naming this deployment. It is
// rendered on the first request, not at start: few callers ask for it.
func (s *server) openapiDocument() fiber.Handler {
	body := sync.OnceValue(func() []byte { return openapi.JSON(s.PublicBaseURL) })
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
		return c.Send(body())
	}
}

// docsPage serves the API reference page; it loads its script and the document from this
// API only (see openapi.DocsCSP).
func (s *server) docsPage() fiber.Handler {
	page := openapi.DocsPage(basePath(s.PublicBaseURL))
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentSecurityPolicy, openapi.DocsCSP)
		return sendAsset(c, page)
	}
}

// docsAsset serves the reference page's bundled files.
func (s *server) docsAsset(c *fiber.Ctx) error {
	a, ok := openapi.DocsAsset(c.Params("*"))
	if !ok {
		return fiber.ErrNotFound
	}
	return sendAsset(c, a)
}

func sendAsset(c *fiber.Ctx, a *openapi.Asset) error {
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderETag, a.ETag)
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Vary(fiber.HeaderAcceptEncoding)
	if openapi.NotModified(c.Get(fiber.HeaderIfNoneMatch), a.ETag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	if a.Gzip != nil && openapi.AcceptsGzip(c.Get(fiber.HeaderAcceptEncoding)) {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.Gzip)
	}
	return c.Send(a.Body)
}

// basePath is the path of the public base URL ("" at the root), under which the reference
// page finds the document and its script behind a proxy.
func basePath(publicBaseURL string) string {
	u, err := url.Parse(publicBaseURL)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}
