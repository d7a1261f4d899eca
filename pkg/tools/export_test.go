package tools

// Test helpers shared with the external tools_test package.
var (
	Golden       = golden
	ReadTestdata = readTestdata
)
