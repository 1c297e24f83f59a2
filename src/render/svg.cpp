#include "render/svg.hpp"

#include <algorithm>

#include "fmt/format.h"

namespace rl::render {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void Svg::extend(double x, double y) {
  width_ = std::max(width_, x);
  height_ = std::max(height_, y);
}

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra) {
  body_ += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" {}/>)", x, y, w, h,
                       fill, extra);
  body_ += '\n';
  extend(x + w, y + h);
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
               std::string_view extra) {
  body_ += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="{}" {}/>)",
                       x1, y1, x2, y2, stroke, width, extra);
  body_ += '\n';
  extend(std::max(x1, x2), std::max(y1, y2));
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view extra) {
  body_ += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" {}/>)", cx, cy, r, fill, extra);
  body_ += '\n';
  extend(cx + r, cy + r);
}

void Svg::text(double x, double y, std::string_view content, double size, std::string_view anchor,
               std::string_view extra) {
  body_ += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="{}" text-anchor="{}" {}>{}</text>)", x, y, size,
                       anchor, extra, escape(content));
  body_ += '\n';
  // A rough extent: monospace-ish 0.6 em per character.
  const double w = 0.6 * size * static_cast<double>(content.size());
  extend(anchor == "start" ? x + w : anchor == "middle" ? x + w / 2 : x, y + 0.3 * size);
}

void Svg::polyline(const std::string& points, std::string_view stroke, double width) {
  body_ += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}"/>)", points, stroke, width);
  body_ += '\n';
}

void Svg::title_last(std::string_view text) {
  // Turn the last "<x .../>" into "<x ...><title>text</title></x>".
  const auto open = body_.rfind('<');
  const auto close = body_.rfind("/>");
  if (open == std::string::npos || close == std::string::npos || close < open) return;
  const auto name_end = body_.find_first_of(" />", open + 1);
  const std::string name = body_.substr(open + 1, name_end - open - 1);
  body_.replace(close, 2, fmt::format("><title>{}</title></{}>", escape(text), name));
}

std::string Svg::str(std::string_view label) const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" role=\"img\">\n<title>{2}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{3}</svg>\n",
      width_ + 10, height_ + 10, escape(label), body_);
}

}  // namespace rl::render
