package hostcore

import (
	"testing"

	"github.com/pi-cli/pi/internal/testhome"
)

func TestMain(m *testing.M) { testhome.Main(m) }
