#pragma once
// A number with six decimals, exactly as fmt's "{:.6f}" (and printf's "%.6f") writes it: the decimal
// nearest to the double's exact value, a tie to the even last digit. requests.csv and timeline.csv
// write their seconds this way, five per request row; fmt's general fixed-precision path costs ~685
// instructions per value, this one ~200 for what they hold (0 <= v < 1e9 s). Anything else (negative,
// -0.0, NaN, infinite, 1e9 or more) goes to fmt.
#include "sim/core/text_writer.hpp"

namespace headroom::report {

void write_six_decimals(TextWriter& out, double v);

}  // namespace headroom::report
