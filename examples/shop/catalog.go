package main

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/shopspring/decimal"
)

// product is one thing the shop sells, priced in USD. Its picture is
// static/img/<ID>.svg, on a tile of its Tint.
type product struct {
	ID, Name, Blurb string
	Price           decimal.Decimal
	Tint            string // warm, blue, green, sand or violet
}

// Picture is the path of the product's picture.
func (p product) Picture() string { return "/static/img/" + p.ID + ".svg" }

// catalogue is what the demo sells.
var catalogue = []product{
	{"mug", "Coffee mug", "Stoneware, 350 ml, glazed inside and out.", decimal.RequireFromString("12.50"), "warm"},
	{"tee", "T-shirt", "Heavy organic cotton with a relaxed fit.", decimal.RequireFromString("25.00"), "blue"},
	{"hoodie", "Hoodie", "Brushed fleece inside and a kangaroo pocket.", decimal.RequireFromString("49.00"), "green"},
	{"cap", "Cap", "Six panels, curved brim, adjustable strap.", decimal.RequireFromString("18.00"), "sand"},
	{"tote", "Tote bag", "Heavy canvas with long handles; fits a laptop.", decimal.RequireFromString("15.00"), "sand"},
	{"stickers", "Sticker pack", "Five weatherproof vinyl stickers.", decimal.RequireFromString("6.00"), "violet"},
}

// productID is what a product's ID may be: it names its picture and the
// buttons' IDs in the pages.
var productID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// tints are the picture tiles the stylesheet has.
var tints = []string{"warm", "blue", "green", "sand", "violet"}

// checkCatalogue refuses a catalogue the shop cannot sell from.
func checkCatalogue(products []product) error {
	if len(products) == 0 {
		return fmt.Errorf("the catalogue is empty")
	}
	seen := map[string]bool{}
	for _, p := range products {
		switch {
		case !productID.MatchString(p.ID):
			return fmt.Errorf("product ID %q: lowercase letters, digits and dashes only", p.ID)
		case seen[p.ID]:
			return fmt.Errorf("product ID %q twice", p.ID)
		case p.Name == "":
			return fmt.Errorf("product %q has no name", p.ID)
		case !p.Price.IsPositive() || p.Price.Exponent() < -2:
			return fmt.Errorf("product %q: the price must be positive, in cents", p.ID)
		case !slices.Contains(tints, p.Tint):
			return fmt.Errorf("product %q: no tint %q", p.ID, p.Tint)
		}
		seen[p.ID] = true
	}
	return nil
}

// find returns the product with this ID.
func find(products []product, id string) (product, bool) {
	i := slices.IndexFunc(products, func(p product) bool { return p.ID == id })
	if i < 0 {
		return product{}, false
	}
	return products[i], true
}
