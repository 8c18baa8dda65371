package exectarget

import (
	"fmt"
	"strings"
)

// splitCommand splits a command line into words the way a POSIX shell
// would for a simple command: blanks separate words, single quotes keep
// everything, double quotes keep everything but \" \\ \$ \`, and a
// backslash outside quotes escapes the next character. No expansion,
// pipes or redirections: a driver that needs them is a script.
func splitCommand(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("command %q ends with a lone backslash", s)
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("command %q has an unterminated single quote", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, fmt.Errorf("command %q has an unterminated double quote", s)
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command: write --target exec:\"PROGRAM ARGS\"")
	}
	return words, nil
}
