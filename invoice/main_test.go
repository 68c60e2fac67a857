package invoice_test

import (
	"os"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/needs"
)

func TestMain(m *testing.M) { os.Exit(needs.Main(m)) }
