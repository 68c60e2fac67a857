package cryptapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

func (c *Client) logRequest(_ retryablehttp.Logger, r *http.Request, attempt int) {
	c.logger.LogAttrs(r.Context(), slog.LevelDebug, "cryptapi request",
		slog.String("method", r.Method),
		slog.String("url", c.redactURL(r.URL)),
		slog.Int("attempt", attempt+1))
}

func (c *Client) logResponse(_ retryablehttp.Logger, resp *http.Response) {
	ctx := context.Background()
	u := ""
	if resp.Request != nil {
		ctx = resp.Request.Context()
		u = c.redactURL(resp.Request.URL)
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "cryptapi response",
		slog.Int("status", resp.StatusCode),
		slog.String("url", u))
}
