package rocprof

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number formats of rocprofv3's writers. Each function states the rule it
// keeps and where the rule comes from.

// csvDouble formats a floating-point CSV field as the CSV encoder's
// numerical_formatter does (source/lib/output/csv.hpp): fixed with 6
// decimals when the value is at least 1, scientific with 8 otherwise
// (16384 -> 16384.000000, 0 -> 0.00000000e+00).
func csvDouble(v float64) string {
	if s, ok := nonFinite(v); ok {
		return s
	}
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	return fmt.Sprintf("%.8e", v)
}

// statsDouble formats an average or a deviation of a statistics file as
// stats_formatter does (source/lib/output/statistics.cpp): fixed with 6
// decimals above 0.01, scientific with 8 otherwise.
func statsDouble(v float64) string {
	if s, ok := nonFinite(v); ok {
		return s
	}
	if v > 0.01 {
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	return fmt.Sprintf("%.8e", v)
}

// statsPercent formats a statistics file's Percentage as stats_formatter
// does for its percentage type: 2 decimals from 1 up, 4 above 0.01,
// scientific with 3 below.
func statsPercent(v float64) string {
	if s, ok := nonFinite(v); ok {
		return s
	}
	switch {
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v > 0.01:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return fmt.Sprintf("%.3e", v)
}

// nonFinite spells NaN and infinities as a C++ stream does.
func nonFinite(v float64) (string, bool) {
	switch {
	case math.IsNaN(v):
		return "nan", true
	case math.IsInf(v, 1):
		return "inf", true
	case math.IsInf(v, -1):
		return "-inf", true
	}
	return "", false
}

// jsonDoubleDecimals is the precision the JSON writer is opened with
// (generateJSON.cpp open_json: 16), rapidjson's maxDecimalPlaces.
const jsonDoubleDecimals = 16

// jsonDouble formats a double as the JSON writer (cereal over rapidjson)
// does: the shortest digits that read back to the same value, an integral
// value with ".0" (4 -> 4.0), small and large values with an exponent
// (1e-7, 1.5e30), at most 16 decimals.
func jsonDouble(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "null" // rapidjson refuses them; cereal would fail the write
	}
	if v == 0 {
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	// d.ddddde±XX: the shortest round-trip digits and the decimal exponent.
	e := strconv.FormatFloat(v, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	n := len(digits)
	kk := exp + 1 // position of the decimal point in digits
	k := kk - n   // value = digits * 10^k
	var b strings.Builder
	b.WriteString(sign)
	switch {
	case k >= 0 && kk <= 21:
		b.WriteString(digits + strings.Repeat("0", k) + ".0")
	case kk > 0 && kk <= 21:
		frac := digits[kk:]
		if len(frac) > jsonDoubleDecimals {
			frac = strings.TrimRight(frac[:jsonDoubleDecimals], "0")
			if frac == "" {
				frac = "0"
			}
		}
		b.WriteString(digits[:kk] + "." + frac)
	case kk > -6 && kk <= 0:
		frac := strings.Repeat("0", -kk) + digits
		if len(frac) > jsonDoubleDecimals {
			frac = strings.TrimRight(frac[:jsonDoubleDecimals], "0")
			if frac == "" {
				return sign + "0.0"
			}
		}
		b.WriteString("0." + frac)
	case kk < -jsonDoubleDecimals:
		return sign + "0.0"
	case n == 1:
		b.WriteString(digits + "e" + strconv.Itoa(kk-1))
	default:
		b.WriteString(digits[:1] + "." + digits[1:] + "e" + strconv.Itoa(kk-1))
	}
	return b.String()
}

// csvRow writes one CSV line as write_csv_entry does (csv.hpp): fields
// separated by commas, text fields in double quotes (without escaping, as
// the reference writes them), numbers bare, a newline at the end.
func csvRow(b *bytes.Buffer, fields ...csvField) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if f.text {
			b.WriteByte('"')
			b.WriteString(f.s)
			b.WriteByte('"')
		} else {
			b.WriteString(f.s)
		}
	}
	b.WriteByte('\n')
}

// csvField is one field: text (quoted) or a number already formatted.
type csvField struct {
	s    string
	text bool
}

func text(s string) csvField { return csvField{s: s, text: true} }
func num(v uint64) csvField  { return csvField{s: strconv.FormatUint(v, 10)} }
func inum(v int64) csvField  { return csvField{s: strconv.FormatInt(v, 10)} }
func raw(s string) csvField  { return csvField{s: s} }
func dbl(v float64) csvField { return csvField{s: csvDouble(v)} }
func header(names []string) []csvField {
	out := make([]csvField, len(names))
	for i, n := range names {
		out[i] = text(n)
	}
	return out
}
