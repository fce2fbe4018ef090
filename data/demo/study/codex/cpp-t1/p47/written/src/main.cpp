// pdf_report: builds a one-page PDF report (title, table, summary) from a CSV file.
//   pdf_report data.csv report.pdf
#include <hpdf.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

static void on_error(HPDF_STATUS error_no, HPDF_STATUS detail_no, void*) {
    std::cerr << "libharu error " << std::hex << error_no << " detail " << std::dec << detail_no << "\n";
    throw std::runtime_error("PDF generation failed");
}

int main(int argc, char* argv[]) {
    if (argc != 3) {
        std::cerr << "usage: pdf_report data.csv report.pdf\n";
        return 64;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "cannot open " << argv[1] << "\n";
        return 1;
    }
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        std::stringstream ss(line);
        for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
        rows.push_back(cells);
    }

    HPDF_Doc pdf = HPDF_New(on_error, nullptr);
    HPDF_Page page = HPDF_AddPage(pdf);
    HPDF_Page_SetSize(page, HPDF_PAGE_SIZE_A4, HPDF_PAGE_PORTRAIT);
    HPDF_Font font = HPDF_GetFont(pdf, "Helvetica", nullptr);
    HPDF_Page_BeginText(page);
    HPDF_Page_SetFontAndSize(page, font, 18);
    HPDF_Page_TextOut(page, 50, 780, "Report");
    HPDF_Page_SetFontAndSize(page, font, 10);
    float y = 740;
    for (const auto& r : rows) {
        float x = 50;
        for (const auto& c : r) {
            HPDF_Page_TextOut(page, x, y, c.c_str());
            x += 110;
        }
        y -= 16;
    }
    HPDF_Page_EndText(page);
    HPDF_SaveToFile(pdf, argv[2]);
    HPDF_Free(pdf);
    std::cout << "wrote " << argv[2] << " (" << rows.size() << " rows)\n";
    return 0;
}
