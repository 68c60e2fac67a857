package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
)

// The shop's mark, a white leaf on a blue tile, is static/logo.svg for
// its own pages. Where a PNG is needed (a browser asking for
// /favicon.ico, an icon for a phone's home screen) it is drawn here, from
// the same shapes in the same 32-unit square.

// logoPNG draws the mark as a size×size PNG, each pixel the average of
// 4×4 samples so that its edges are smooth.
func logoPNG(size int) []byte {
	blue := color.NRGBA{0x1d, 0x55, 0xc9, 0xff}
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const n = 4
	for py := range size {
		for px := range size {
			var tile, leaf, rib float64
			for sy := range n {
				for sx := range n {
					x := (float64(px) + (float64(sx)+.5)/n) * 32 / float64(size)
					y := (float64(py) + (float64(sy)+.5)/n) * 32 / float64(size)
					if !inRoundedSquare(x, y, 32, 8) {
						continue
					}
					tile++
					switch {
					case onRib(x, y):
						rib++
					case inLeaf(x, y):
						leaf++
					}
				}
			}
			if tile == 0 {
				continue
			}
			// White where the leaf is, blue elsewhere on the tile (its rib
			// included); the tile's edge is transparent in proportion.
			white := leaf / tile
			mix := func(c uint8) uint8 { return uint8(math.Round(float64(c)*(1-white) + 255*white)) }
			img.SetNRGBA(px, py, color.NRGBA{mix(blue.R), mix(blue.G), mix(blue.B), uint8(math.Round(255 * tile / (n * n)))})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}

// inRoundedSquare reports whether (x, y) is inside the square of side s
// with corners of radius r.
func inRoundedSquare(x, y, s, r float64) bool {
	cx := math.Max(r, math.Min(x, s-r))
	cy := math.Max(r, math.Min(y, s-r))
	return x >= 0 && y >= 0 && x <= s && y <= s && math.Hypot(x-cx, y-cy) <= r
}

// inLeaf reports whether (x, y) is inside the leaf: the lens between
// (16, 5) and (16, 27), as wide as the SVG's, made of two circles.
func inLeaf(x, y float64) bool {
	const r = 13.6
	return math.Hypot(x-8, y-16) <= r && math.Hypot(x-24, y-16) <= r
}

// onRib reports whether (x, y) is on the leaf's rib or its two veins.
func onRib(x, y float64) bool {
	const w = 0.9
	return dist(x, y, 16, 10, 16, 28) <= w || dist(x, y, 16, 16, 12.5, 13) <= w || dist(x, y, 16, 21, 19.5, 17.5) <= w
}

// dist is the distance from (x, y) to the segment from (ax, ay) to (bx, by).
func dist(x, y, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := math.Max(0, math.Min(1, ((x-ax)*dx+(y-ay)*dy)/(dx*dx+dy*dy)))
	return math.Hypot(x-(ax+t*dx), y-(ay+t*dy))
}

// logoIcon serves the mark as a PNG (an icon for browsers and phones that
// ask for one).
func logoIcon(png []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "image/png")
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(png)
	}
}
