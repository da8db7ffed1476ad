package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/tiercache/tiercache/coldstore"
)

const tenantUsage = `usage: tiercache tenant list [-config FILE] [-json]
                                  the cold store's tenant namespaces and its unallocated bytes
       tiercache tenant drop NAME [-config FILE]
                                  delete tenant NAME's cold namespace and every key in it
                                  (the sidecar must be stopped and NAME gone from the config,
                                  as a tenant's name and as a cold_namespace;
                                  a KV namespace this host did not make is only forgotten)
The cold store is the one the config (and TIERCACHE_* environment) names, as the sidecar opens it.
`

// cmdTenant runs `tiercache tenant`: the tenants' cold namespaces while
// the sidecar is stopped (coldstore CS8).
func cmdTenant(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stderr, tenantUsage)
		return 2
	}
	verb, args := args[0], args[1:]
	var name string
	if verb == "drop" {
		if len(args) == 0 || len(args[0]) == 0 || args[0][0] == '-' {
			fmt.Fprint(stderr, "tiercache tenant drop: the tenant's name is missing\n", tenantUsage)
			return 2
		}
		name, args = args[0], args[1:]
	}
	var asJSON bool
	if i := slices.Index(args, "-json"); i >= 0 && verb == "list" {
		asJSON, args = true, slices.Delete(args, i, i+1)
	}
	cfg, err := loadConfig("tenant "+verb, args, os.Environ(), stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	b, err := cfg.build(zap.NewNop())
	if err != nil {
		return exitCode(err, stderr)
	}
	if b.cold == nil {
		fmt.Fprintln(stderr, "tiercache tenant: cold.backend is none: no cold namespaces")
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch verb {
	case "list":
		list, free, err := b.cold.Namespaces(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "tiercache tenant list: %v\n", err)
			return 1
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.Encode(struct {
				Namespaces  []coldstore.TenantNamespace `json:"namespaces"`
				Unallocated int64                       `json:"unallocated"`
			}{list, free})
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tBYTES\tCREATED\tID\tWHERE")
		for _, n := range list {
			fmt.Fprintf(tw, "%s\t%d\t%v\t%s\t%s\n", n.Name, n.Bytes, n.Created, n.ID, n.Where)
		}
		fmt.Fprintf(tw, "unallocated\t%d\t\t\t\n", free)
		tw.Flush()
		return 0
	case "drop":
		if slices.ContainsFunc(cfg.Tenants, func(t TenantConfig) bool { return t.Name == name }) {
			fmt.Fprintf(stderr, "tiercache tenant drop %s: tenant %s is still configured (tenants in the config); remove it there first\n", name, name)
			return 1
		}
		// A volume's namespace a tenant takes by name (a KV SSD's
		// cold_namespace is an NSID; its registry name is the tenant's).
		if i := slices.IndexFunc(cfg.Tenants, func(t TenantConfig) bool { return t.ColdNamespace == name }); i >= 0 && b.cold.Mode != "passthrough" {
			fmt.Fprintf(stderr, "tiercache tenant drop %s: namespace %s is tenant %s's (cold_namespace), which is still configured; remove it there first\n", name, name, cfg.Tenants[i].Name)
			return 1
		}
		if err := b.cold.DropTenant(ctx, name); err != nil {
			fmt.Fprintf(stderr, "tiercache tenant drop %s: %v\n", name, err)
			if errors.Is(err, coldstore.ErrInUse) {
				fmt.Fprintln(stderr, "stop the sidecar first")
			}
			return 1
		}
		fmt.Fprintf(stdout, "dropped tenant %s's cold namespace\n", name)
		return 0
	}
	fmt.Fprintf(stderr, "tiercache tenant: unknown verb %q\n%s", verb, tenantUsage)
	return 2
}
