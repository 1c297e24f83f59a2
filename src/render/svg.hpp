#pragma once
// A small SVG writer: shapes and text appended in order, escaped, with one size for the whole
// picture. Pictures are plain SVG 1.1 with no scripts and no external references, so they can be
// saved as files or inlined into an HTML page.
#include <string>
#include <string_view>

namespace rl::render {

// Text made safe for XML content and attribute values.
std::string escape(std::string_view text);

class Svg {
 public:
  // Shapes; `extra` is raw attributes (e.g. R"(stroke="#000")"), already escaped.
  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view extra = {});
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view extra = {});
  // anchor: start, middle or end; `title` (when given) shows on hover.
  void text(double x, double y, std::string_view text, double size = 12, std::string_view anchor = "start",
            std::string_view extra = {});
  void polyline(const std::string& points, std::string_view stroke, double width = 1.5);
  void raw(std::string_view markup) { body_ += markup; }
  // A <title> for the next element a viewer shows on hover: call right after the element.
  void title_last(std::string_view text);

  // Grows the canvas to cover (x, y).
  void extend(double x, double y);
  double width() const { return width_; }
  double height() const { return height_; }

  // The document: <svg ...> with the body; `label` becomes its <title> (accessible name).
  std::string str(std::string_view label) const;

 private:
  std::string body_;
  double width_ = 0, height_ = 0;
};

}  // namespace rl::render
