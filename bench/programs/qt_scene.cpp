// A real GUI toolkit's scene (issue 38): a plain Qt 6 Widgets program, run unchanged under
// every allocator by bench/programs/run_toolkit.sh (it calls nothing of sta-pool's; the
// allocator is whichever malloc the process has, LD_PRELOAD's or glibc's).
//
//   qt_scene [ROUNDS [GROUPS]]   (default: 5 rounds of 240 groups, 18,727 widgets a round)
//
// Each round builds one window — a QScrollArea of GROUPS group boxes in a grid, each box
// holding a QGridLayout of 14 rows (QLabel, QLineEdit, QCheckBox, QPushButton) and three
// QFrames of six QLabels in a QVBoxLayout: 78 widgets a group — shows it, lets Qt lay it
// out and polish it (processEvents) and renders four stretches of it into a QPixmap
// (grab); then updates it: every label and line edit gets a new text, every check box is
// toggled, every 16th button gets a style sheet of its own and every 32nd group box one
// for its children, laid out and rendered again; then deletes the window. The scene lives on
// the main thread; Qt's own thread pool takes a part of the rendering into the pixmaps
// (about 5 % of the CPU samples on glibc here).
//
// The platform is the offscreen one unless QT_QPA_PLATFORM says otherwise: no X server,
// the rendering goes to memory.
//
// Output: one JSON line,
//   {"program": "qt_scene", "rounds", "groups", "check": {...}, "cpu_s": {"startup",
//    "build", "update", "teardown", "total"}, "maxrss_kib"}
// "check" depends on nothing but the scene and the fonts (widgets and labels made, the
// characters of the labels' texts after the updates, the check boxes checked, the laid-out
// size of the scene's contents, the pixels rendered, summed over the rounds): the same
// under every allocator, so the runner compares it with glibc's. "cpu_s": CPU seconds of
// the process (CLOCK_PROCESS_CPUTIME_ID, every thread) in each phase, summed over the
// rounds; "startup" is everything before the first round (the dynamic loader,
// QApplication, the fonts). "maxrss_kib": the process's peak RSS (getrusage).
#include <QApplication>
#include <QCheckBox>
#include <QFrame>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QString>
#include <QVBoxLayout>
#include <QVector>
#include <QWidget>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace {

constexpr int rows_per_group = 14;
constexpr int frames_per_group = 3;
constexpr int labels_per_frame = 6;
constexpr int columns = 4; // group boxes side by side
constexpr int grabs = 4;   // stretches of the scene rendered per render
constexpr int restyle_button_every = 16;
constexpr int restyle_group_every = 32;

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What the oracle compares, summed over the rounds.
struct Check {
    long long widgets = 0;
    long long labels = 0;
    long long text_chars = 0;
    long long checked = 0;
    long long content_w = 0;
    long long content_h = 0;
    long long pixels = 0; // rendered by grab
};

// One round's window and the widgets the update touches.
struct Scene {
    QScrollArea* window = nullptr;
    QWidget* content = nullptr;
    QVector<QGroupBox*> boxes;
    QVector<QLabel*> labels;
    QVector<QLineEdit*> edits;
    QVector<QCheckBox*> checks;
    QVector<QPushButton*> buttons;
};

QGroupBox* build_group(Scene& s, int g) {
    auto* box = new QGroupBox(QStringLiteral("Group %1").arg(g));
    s.boxes.push_back(box);
    auto* outer = new QVBoxLayout(box);
    auto* grid = new QGridLayout;
    outer->addLayout(grid);
    for (int r = 0; r < rows_per_group; ++r) {
        auto* label = new QLabel(QStringLiteral("Row %1 of group %2").arg(r).arg(g));
        auto* edit = new QLineEdit(QStringLiteral("value %1.%2").arg(g).arg(r));
        auto* check = new QCheckBox(QStringLiteral("option %1").arg(r));
        check->setChecked((g + r) % 3 == 0);
        auto* button = new QPushButton(QStringLiteral("Apply %1").arg(r));
        grid->addWidget(label, r, 0);
        grid->addWidget(edit, r, 1);
        grid->addWidget(check, r, 2);
        grid->addWidget(button, r, 3);
        s.labels.push_back(label);
        s.edits.push_back(edit);
        s.checks.push_back(check);
        s.buttons.push_back(button);
    }
    for (int f = 0; f < frames_per_group; ++f) {
        auto* frame = new QFrame;
        frame->setFrameShape(QFrame::StyledPanel);
        auto* column = new QVBoxLayout(frame);
        for (int k = 0; k < labels_per_frame; ++k) {
            auto* note = new QLabel(QStringLiteral("note %1 of frame %2").arg(k).arg(f));
            column->addWidget(note);
            s.labels.push_back(note);
        }
        outer->addWidget(frame);
    }
    return box;
}

// Shows grabs stretches of the scene, top to bottom, each rendered into a pixmap.
long long render(Scene& s) {
    QScrollBar* bar = s.window->verticalScrollBar();
    long long pixels = 0;
    for (int i = 0; i < grabs; ++i) {
        bar->setValue(bar->maximum() / (grabs - 1) * i);
        QCoreApplication::processEvents();
        const QPixmap shot = s.window->grab();
        pixels += static_cast<long long>(shot.width()) * shot.height();
    }
    return pixels;
}

void build(Scene& s, int groups, Check& check) {
    s.window = new QScrollArea;
    s.window->setWindowTitle(QStringLiteral("qt_scene"));
    s.window->resize(1280, 800);
    s.content = new QWidget;
    auto* grid = new QGridLayout(s.content);
    for (int g = 0; g < groups; ++g)
        grid->addWidget(build_group(s, g), g / columns, g % columns);
    s.window->setWidget(s.content);
    s.window->setWidgetResizable(true);
    s.window->show();
    QCoreApplication::processEvents();
    s.content->adjustSize();
    check.pixels += render(s);
    check.widgets += s.window->findChildren<QWidget*>().size() + 1;
    check.labels += s.labels.size();
}

void update(Scene& s, int round, Check& check) {
    for (qsizetype i = 0; i < s.labels.size(); ++i)
        s.labels[i]->setText(QStringLiteral("label %1, round %2").arg(i).arg(round));
    for (qsizetype i = 0; i < s.edits.size(); ++i)
        s.edits[i]->setText(QStringLiteral("edited %1/%2").arg(round).arg(i * 7 % 1000));
    for (QCheckBox* c : s.checks)
        c->toggle();
    const QString colors[] = {QStringLiteral("#b03030"), QStringLiteral("#3030b0"),
                              QStringLiteral("#308030")};
    for (qsizetype i = 0; i < s.buttons.size(); i += restyle_button_every)
        s.buttons[i]->setStyleSheet(
            QStringLiteral("QPushButton { color: %1; font-weight: bold; padding: 4px; }")
                .arg(colors[(i + round) % 3]));
    for (qsizetype g = 0; g < s.boxes.size(); g += restyle_group_every)
        s.boxes[g]->setStyleSheet(
            QStringLiteral("QLabel { color: %1; } QGroupBox { border: 1px solid %1; }")
                .arg(colors[(g + round + 1) % 3]));
    QCoreApplication::processEvents();
    s.content->adjustSize();
    check.pixels += render(s);
    for (QLabel* l : s.labels)
        check.text_chars += l->text().size();
    for (QCheckBox* c : s.checks)
        check.checked += c->isChecked() ? 1 : 0;
    const QSize size = s.content->sizeHint();
    check.content_w += size.width();
    check.content_h += size.height();
}

void teardown(Scene& s) {
    delete s.window;
    s = Scene{};
    QCoreApplication::processEvents();
}

int positive(const char* text, const char* what) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 100000) {
        std::fprintf(stderr, "qt_scene: %s must be a number from 1 to 100000, not %s\n", what,
                     text);
        std::exit(2);
    }
    return static_cast<int>(v);
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 3) {
        std::fprintf(stderr, "usage: qt_scene [ROUNDS [GROUPS]]\n");
        return 2;
    }
    const int rounds = argc > 1 ? positive(argv[1], "ROUNDS") : 5;
    const int groups = argc > 2 ? positive(argv[2], "GROUPS") : 240;
    setenv("QT_QPA_PLATFORM", "offscreen", 0); // unless the environment names another
    int qt_argc = 1;
    QApplication app(qt_argc, argv);
    const double start = cpu_seconds();
    double build_s = 0, update_s = 0, teardown_s = 0;
    Check check;
    for (int round = 0; round < rounds; ++round) {
        Scene s;
        const double t0 = cpu_seconds();
        build(s, groups, check);
        const double t1 = cpu_seconds();
        update(s, round, check);
        const double t2 = cpu_seconds();
        teardown(s);
        const double t3 = cpu_seconds();
        build_s += t1 - t0;
        update_s += t2 - t1;
        teardown_s += t3 - t2;
    }
    const double total = cpu_seconds();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("{\"program\": \"qt_scene\", \"rounds\": %d, \"groups\": %d, "
                "\"check\": {\"widgets\": %lld, \"labels\": %lld, \"text_chars\": %lld, "
                "\"checked\": %lld, \"content_w\": %lld, \"content_h\": %lld, \"pixels\": %lld}, "
                "\"cpu_s\": {\"startup\": %.4f, \"build\": %.4f, \"update\": %.4f, "
                "\"teardown\": %.4f, \"total\": %.4f}, \"maxrss_kib\": %ld}\n",
                rounds, groups, check.widgets, check.labels, check.text_chars, check.checked,
                check.content_w, check.content_h, check.pixels, start, build_s, update_s,
                teardown_s, total, usage.ru_maxrss);
    return 0;
}
