//go:build tools

// Package tools pins the module's dependencies while the packages that use
// them are being written, so that parallel work shares one go.mod.
package tools

import (
	_ "github.com/cucumber/godog"
	_ "github.com/ebitengine/purego"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sebdah/goldie/v2"
	_ "go.yaml.in/yaml/v3"
)
