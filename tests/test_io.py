"""CSV writer and reader of lagsim trajectories (issue 3 "CSV", issue 4 "Tests").

Columns follow docs/architecture.md: t, q, q_dot, lambda_<c> (seed 001 §10.7), residual_<c> and
residual_<c>_dot (φ and φ̇, seed 003's c(q) = 0, ċ = 0), energy (h, seed 001).
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lagsim.errors import InputError, Location
from lagsim.output import io as lio
from lagsim.output.io import Table, atomic_output, read_csv, write_csv

COLUMNS = [
    "t",
    "x",
    "y",
    "x_dot",
    "y_dot",
    "lambda_c1",
    "lambda_v1",
    "residual_c1",
    "residual_v1",
    "residual_c1_dot",
    "energy",
]


def _awkward_data(rows: int = 64) -> np.ndarray:
    rng = np.random.default_rng(7)
    data = rng.standard_normal((rows, len(COLUMNS))) * 10.0 ** rng.integers(-300, 300, (rows, 1))
    data[0, :6] = [0.0, -0.0, 1.0 / 3.0, np.nextafter(1.0, 2.0), 5e-324, 1.7976931348623157e308]
    data[1, :4] = [2.2250738585072014e-308, -1e-310, 0.1 + 0.2, np.pi]
    data[:, 0] = np.arange(rows) * 0.1
    return data


def test_round_trip_is_bit_exact(tmp_path: Path) -> None:
    data = _awkward_data()
    path = tmp_path / "run.csv"
    write_csv(COLUMNS, data, path)
    table = read_csv(path)
    assert table.columns == tuple(COLUMNS)
    assert table.data.shape == data.shape
    assert np.array_equal(table.data.view(np.uint64), data.view(np.uint64))
    assert table.source == str(path)


def test_cells_are_repr_of_float(tmp_path: Path) -> None:
    data = np.array([[0.0, 0.1 + 0.2, -0.0], [1.0, 1e-300, 2.0 / 3.0]])
    path = tmp_path / "small.csv"
    write_csv(["t", "x", "x_dot"], data, path)
    assert path.read_text() == (
        "t,x,x_dot\n0.0,0.30000000000000004,-0.0\n1.0,1e-300,0.6666666666666666\n"
    )


def test_nan_and_inf_round_trip(tmp_path: Path) -> None:
    data = np.array([[0.0, np.nan], [1.0, np.inf], [2.0, -np.inf]])
    path = tmp_path / "nonfinite.csv"
    write_csv(["t", "x"], data, path)
    assert np.array_equal(read_csv(path).data, data, equal_nan=True)


def test_dash_writes_stdout_same_text_as_file(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = _awkward_data(5)
    write_csv(COLUMNS, data, tmp_path / "f.csv")
    write_csv(COLUMNS, data, "-")
    assert capsys.readouterr().out == (tmp_path / "f.csv").read_text()


def test_dash_reads_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("t,x\n0,1.5\n1,2.5\n"))
    table = read_csv("-")
    assert table.source == "<stdin>"
    assert table.column("x").tolist() == [1.5, 2.5]


def test_closed_pipe_reaches_the_caller_as_broken_pipe() -> None:
    """The writer does not swallow a closed pipe: the CLI decides (it ends quietly, exit 141)."""
    script = textwrap.dedent(
        """
        import numpy as np
        from lagsim.output.io import write_csv
        data = np.tile(np.linspace(0.0, 1.0, 3), (200_000, 1))
        try:
            write_csv(["t", "x", "x_dot"], data, "-")
        except BrokenPipeError:
            import os, sys
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(7)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 7
    assert first == b"t,x,x_dot\n"
    assert err == b""


def test_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_lines(columns, data):
        yield "t,x\n"
        raise RuntimeError("disk full")

    monkeypatch.setattr(lio, "_lines", failing_lines)
    with pytest.raises(RuntimeError, match="disk full"):
        write_csv(["t", "x"], np.zeros((3, 2)), tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old contents\n")

    def failing_lines(columns, data):
        yield "t,x\n"
        raise RuntimeError("interrupted")

    monkeypatch.setattr(lio, "_lines", failing_lines)
    with pytest.raises(RuntimeError):
        write_csv(["t", "x"], np.zeros((3, 2)), target)
    assert target.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_atomic_output_renames_on_success(tmp_path: Path) -> None:
    target = tmp_path / "pic.png"
    with atomic_output(target) as tmp:
        assert tmp.parent == tmp_path
        assert tmp.suffix == ".png"
        assert not target.exists()
        tmp.write_bytes(b"image")
    assert target.read_bytes() == b"image"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pic.png"]


def test_write_into_missing_folder_is_input_error(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "out.csv"
    with pytest.raises(InputError) as err:
        write_csv(["t", "x"], np.zeros((2, 2)), target)
    assert err.value.location == Location("-o")
    assert err.value.message == (
        f"cannot write {str(target)!r}: the folder {str(target.parent)!r} does not exist"
    )


def test_shape_mismatch_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not match 3 columns"):
        write_csv(["t", "x", "y"], np.zeros((4, 2)), tmp_path / "bad.csv")


def _error(tmp_path: Path, text: str) -> InputError:
    path = tmp_path / "in.csv"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_csv(path)
    return err.value


@pytest.mark.parametrize(
    ("text", "line", "col", "message"),
    [
        ("", None, None, "empty input: expected a CSV header line such as 't,x,x_dot'"),
        ("\n  \n", None, None, "empty input: expected a CSV header line such as 't,x,x_dot'"),
        (
            "x,y\n1,2\n3,4\n",
            1,
            1,
            "no 't' column: a lagsim CSV starts with the time column 't' (the header is x,y)",
        ),
        ("t,x\n0,1\n1, abc\n", 3, 4, "not a number: 'abc' in column 'x'"),
        ("t,x\n0,1\n1,\n", 3, 3, "not a number: '' in column 'x'"),
        ("t,x\n0,1\n1,2,3\n", 3, 5, "row has 3 cells, the header has 2"),
        ("t,x,y\n0,1,2\n1,2\n", 3, 4, "row has 2 cells, the header has 3"),
        ("t,x\n0,1\n", 2, None, "1 row of data; a plot needs at least two samples"),
        ("t,x\n", 1, None, "0 rows of data; a plot needs at least two samples"),
        ("t,x,x\n0,1,1\n1,2,2\n", 1, 5, "duplicate column name 'x' (columns 2 and 3)"),
        ("t,,x\n0,1,1\n1,2,2\n", 1, 3, "header cell 2 is empty"),
    ],
)
def test_read_errors(
    tmp_path: Path, text: str, line: int | None, col: int | None, message: str
) -> None:
    err = _error(tmp_path, text)
    path = str(tmp_path / "in.csv")
    assert err.message == message
    assert err.location == Location(path, line, col)
    assert err.exit_code == 2
    where = path if line is None else f"{path}:{line}" if col is None else f"{path}:{line}:{col}"
    assert str(err) == f"{where}: {message}"


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_csv(tmp_path / "absent.csv")


def test_crlf_and_spaces_are_read(tmp_path: Path) -> None:
    path = tmp_path / "dos.csv"
    path.write_bytes(b"t, x\r\n0, 1.25\r\n1 ,2.5\r\n")
    table = read_csv(path)
    assert table.columns == ("t", "x")
    assert table.data.tolist() == [[0.0, 1.25], [1.0, 2.5]]


def test_column_groups(tmp_path: Path) -> None:
    path = tmp_path / "groups.csv"
    write_csv(COLUMNS, _awkward_data(3), path)
    table = read_csv(path)
    assert table.coordinates == ("x", "y")
    assert table.velocities == ("x_dot", "y_dot")
    assert table.multipliers == ("lambda_c1", "lambda_v1")
    assert table.residuals == ("residual_c1", "residual_v1")
    assert table.residuals_dot == ("residual_c1_dot",)
    assert table.position_residuals == ("residual_c1",)
    assert table.velocity_residuals == ("residual_c1_dot", "residual_v1")
    assert table.has_energy and table.has("t") and not table.has("z")
    assert table.n_samples == 3


def test_unknown_column_lists_the_columns() -> None:
    table = Table(("t", "x"), np.zeros((2, 2)), "run.csv")
    with pytest.raises(InputError) as err:
        table.column("z")
    assert str(err.value) == "run.csv: unknown column 'z'; the columns are: t, x"


def test_table_data_is_read_only(tmp_path: Path) -> None:
    path = tmp_path / "ro.csv"
    write_csv(["t", "x"], np.zeros((2, 2)), path)
    with pytest.raises(ValueError, match="read-only"):
        read_csv(path).data[0, 0] = 1.0


def test_table_checks_its_shape() -> None:
    with pytest.raises(ValueError, match=r"data of shape \(2, 3\) does not match 2 columns"):
        Table(("t", "x"), np.zeros((2, 3)), "run.csv")


def test_a_full_disk_is_an_output_error_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    target = tmp_path / "out.csv"
    target.write_text("old contents\n")

    def full_disk(columns, data):
        yield "t,x\n"
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lio, "_lines", full_disk)
    with pytest.raises(lio.OutputError) as err:
        write_csv(["t", "x"], np.zeros((3, 2)), target)
    assert err.value.exit_code == 1
    assert str(err.value) == f"-o: cannot write {str(target)!r}: No space left on device"
    assert target.read_text() == "old contents\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_an_interrupt_while_the_temporary_file_is_made_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C arriving just as the temporary file is created, before its name is known."""
    import signal

    real = lio.make_temporary

    def interrupted(*args, **kwargs):
        made = real(*args, **kwargs)
        signal.raise_signal(signal.SIGINT)
        return made

    monkeypatch.setattr(lio, "make_temporary", interrupted)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            write_csv(["t", "x"], np.zeros((2, 2)), tmp_path / "out.csv")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_is_made_as_mkstemp_makes_it(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """lagsim.output.io.make_temporary (mkstemp without the tempfile module): an empty file of
    mode 0600 named prefix + 8 characters of a-z0-9_ + suffix, a name already taken drawn
    again rather than opened, a symbolic link in the way never followed."""
    import os
    import re

    draws = iter([b"\x00" * 8, b"\x00" * 8, b"\x01" * 8])
    monkeypatch.setattr(lio.os, "urandom", lambda n: next(draws))
    first = lio.make_temporary(tmp_path, ".p", ".tmp.csv")
    second = lio.make_temporary(tmp_path, ".p", ".tmp.csv")
    assert (first.name, second.name) == (".paaaaaaaa.tmp.csv", ".pbbbbbbbb.tmp.csv")
    assert first.read_bytes() == b"" and (first.stat().st_mode & 0o777) == 0o600
    assert first.is_absolute()
    monkeypatch.undo()
    (tmp_path / "target").write_text("kept\n")
    os.symlink(tmp_path / "target", tmp_path / ".qcccccccc.tmp")
    more = iter([b"\x02" * 8, b"\x03" * 8])
    monkeypatch.setattr(lio.os, "urandom", lambda n: next(more))
    made = lio.make_temporary(tmp_path, ".q", ".tmp")
    assert made.name == ".qdddddddd.tmp"
    assert (tmp_path / "target").read_text() == "kept\n"
    monkeypatch.undo()
    assert re.fullmatch(r"\.r[a-z0-9_]{8}\.tmp", lio.make_temporary(tmp_path, ".r", ".tmp").name)
