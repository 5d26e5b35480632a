package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/contentapi/contentapi/internal/mcpserver"
)

// serveMCP is ctl mcp: the MCP server on stdin and stdout, for assistants that start a
// process (Claude Desktop, Claude Code, Cursor). Its tools and prompts are the /mcp
// endpoint's; each tool call is sent to the running API over HTTP with CONTENTAPI_KEY, so
// it is authenticated, rate limited and charged there. Nothing but MCP is written to out.
func serveMCP(ctx context.Context, args []string, in io.ReadCloser, out io.WriteCloser, getenv func(string) string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("url", "", "the API's base URL (default: CONTENTAPI_URL, or http://localhost:8080)")
	syncTimeout := fs.Duration("sync-timeout", 30*time.Second, "the API's SYNC_TIMEOUT, the total of progress notifications")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := *base
	if url == "" {
		url = getenv("CONTENTAPI_URL")
	}
	if url == "" {
		url = "http://localhost:8080"
	}
	key := getenv("CONTENTAPI_KEY")
	if key == "" {
		return errors.New("mcp: set CONTENTAPI_KEY to an API key (ap_...)")
	}
	return mcpserver.ServeStdio(ctx, in, out, url, key, mcpserver.Options{SyncTimeout: *syncTimeout, Version: "ctl"})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
