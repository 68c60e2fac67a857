package main

import (
	"context"
	"flag"
	"runtime"
	"runtime/debug"

	"github.com/forwardpay/cryptapi-go"
)

// userAgent is what the tool sends: its name and the SDK version.
const userAgent = "cryptapi-cli/" + cryptapi.Version

func versionCmd() *command {
	return &command{
		name:     "version",
		synopsis: "[-json]",
		summary:  "print the version of the tool and the SDK",
		help: `Prints the version (the SDK's cryptapi.Version, which the tool and the
SDK send in their User-Agent), the module version it was built from when
known (go install ...@v0.1.0 records it) and the Go version.`,
		setup: func(fs *flag.FlagSet, co *common) func(context.Context, *app) error {
			return func(_ context.Context, a *app) error {
				module := ""
				if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
					module = bi.Main.Version
				}
				if co.json {
					return writeJSON(a.stdout, struct {
						Version   string `json:"version"`
						Module    string `json:"module,omitempty"`
						UserAgent string `json:"user_agent"`
						Go        string `json:"go"`
					}{cryptapi.Version, module, userAgent, runtime.Version()})
				}
				t := newTable()
				t.kv("Version", cryptapi.Version)
				t.kv("Module", module)
				t.kv("User-Agent", userAgent)
				t.kv("Go", runtime.Version())
				return t.flush(a.stdout)
			}
		},
	}
}
