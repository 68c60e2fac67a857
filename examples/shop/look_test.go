package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/forwardpay/cryptapi-go/internal/needs"
)

// screen is a viewport the shop is looked at in.
type screen struct {
	w, h   int64
	scheme string // prefers-color-scheme: light or dark
}

func (s screen) String() string { return fmt.Sprintf("%dx%d-%s", s.w, s.h, s.scheme) }

// screens are a phone and a desktop, light and dark.
var screens = []screen{{360, 640, "light"}, {360, 640, "dark"}, {1280, 800, "light"}, {1280, 800, "dark"}}

// setScreen sets the tab's viewport and colour scheme. Scrollbars are
// hidden, as on a phone, so that the page is laid out at the screen's
// whole width, as the screenshot shows it.
func setScreen(t *testing.T, b *needs.Browser, s screen) {
	t.Helper()
	b.Do(t,
		chromedp.EmulateViewport(s.w, s.h),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, emulation.SetScrollbarsHidden, emulation.SetScrollbarsHiddenParams{Hidden: true}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s.scheme}},
			})
			return err
		}),
	)
}

// look checks the page in the tab on every screen: no Go error text, no
// horizontal scrolling, nothing serious or critical for axe-core; and
// saves a screenshot of each as name-<screen>.png in dir. docs maps a
// screen to the file in docs/ its screenshot is written to when
// CRYPTAPI_UPDATE_SCREENSHOT=1. axe-core needs JavaScript: look turns it
// on for axe, and leaves it off (the shop's own pages need none), on the
// phone, light.
func look(t *testing.T, b *needs.Browser, dir, name string, docs map[screen]string) {
	t.Helper()
	text := b.Text(t, "body")
	for _, bad := range goErrorText {
		assert.NotContains(t, text, bad, name)
	}
	for _, s := range screens {
		setScreen(t, b, s)
		fits := needs.Eval[bool](t, b, fmt.Sprintf(`document.documentElement.scrollWidth <= %d`, s.w))
		assert.True(t, fits, "%s: no horizontal scrolling at %s", name, s)
		noScript(t, b, false)
		for _, v := range needs.Axe(t, b) {
			t.Errorf("%s at %s: axe %s (%s): %s: %q", name, s, v.ID, v.Impact, v.Help, v.Nodes)
		}
		noScript(t, b, true)
		png := b.Screenshot(t, dir, fmt.Sprintf("%s-%s.png", name, s))
		if doc, ok := docs[s]; ok && os.Getenv(docScreenshotEnv) == "1" {
			require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", doc), png, 0o644))
		}
	}
	setScreen(t, b, screens[0])
}

// noScript turns the tab's JavaScript off or on again.
func noScript(t *testing.T, b *needs.Browser, off bool) {
	t.Helper()
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return err
	}))
}
