// Package policy is part of tiercache; see DESIGN.md. This file is filled in by the issue that builds the package.
package policy
