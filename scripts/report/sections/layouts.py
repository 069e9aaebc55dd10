"""The layouts: a bullet of the method only. It stands between the sections that name the
pool's rows by dispatch and those that name them by layout (core.LAYOUT_ROWS)."""


def method(data):
    return [
        "- **layouts**: every pool row is measured in the seed's shared-cursor layout "
        "(`sta-branch`, `sta-table`, `sta (shared cursor)`) and in the span layout (`sta spans "
        "...`, `sta (spans)`); the targets are judged on each, side by side."]
