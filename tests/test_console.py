"""What several ranks print to one console stays readable."""


def test_console_lines_reach_the_os_in_one_write():
    """Several ranks share torchrun's console: under PYTHONUNBUFFERED, print() writes text and newline separately and
    another rank's line can land in between. write_whole_lines makes each line a single write."""
    import io

    from fleetlab.process import write_whole_lines

    class CountingRaw(io.RawIOBase):
        def __init__(self):
            self.writes = []

        def writable(self):
            return True

        def write(self, b):
            self.writes.append(bytes(b))
            return len(b)

    def writes_of_one_print(fix: bool) -> list[bytes]:
        raw = CountingRaw()
        stream = io.TextIOWrapper(raw, write_through=True)  # what PYTHONUNBUFFERED=1 gives sys.stdout
        if fix:
            write_whole_lines(stream)
        print("it     4/4 | fps 30,266", file=stream, flush=True)
        return raw.writes

    assert len(writes_of_one_print(fix=False)) == 2  # the upstream behaviour: text, then newline
    assert writes_of_one_print(fix=True) == [b"it     4/4 | fps 30,266\n"]
