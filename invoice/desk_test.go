package invoice_test

import (
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/invoicesuite"
	"github.com/forwardpay/cryptapi-go/invoice"
)

func TestScenariosWithTheMemoryStore(t *testing.T) {
	invoicesuite.Run(t, func(*testing.T) invoice.Store { return invoice.NewMemoryStore() })
}
