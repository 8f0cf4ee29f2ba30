"""Image headers read without a library, and images fitted to the caps (real files,
decoded again with Pillow to check what would be sent)."""

from __future__ import annotations

import pytest

from caretz.tools.image_fit import MAX_BYTES, MAX_SIDE, ImageProblem, fit_image
from caretz.tools.image_format import ImageHeader, read_header
from tests.pictures import decoded, noise, picture, png


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (png(31, 17), "image/png"),
        (picture(31, 17, "JPEG"), "image/jpeg"),
        (picture(31, 17, "PNG", mode="RGBA"), "image/png"),
        (picture(31, 17, "GIF"), "image/gif"),
        (picture(31, 17, "WEBP"), "image/webp"),
        (picture(31, 17, "WEBP", mode="RGBA"), "image/webp"),  # VP8X or VP8L
    ],
)
def test_the_header_gives_the_format_and_size(data, media_type):
    assert read_header(data) == ImageHeader(media_type, 31, 17)


def test_a_lossless_webp_header_is_read():
    from PIL import Image

    from tests.pictures import encoded

    data = encoded(Image.new("RGB", (300, 5), (1, 2, 3)), "WEBP", lossless=True)
    assert data[12:16] == b"VP8L"
    assert read_header(data) == ImageHeader("image/webp", 300, 5)


@pytest.mark.parametrize(
    "data",
    [b"", b"hello world", png(4, 4)[:20], b"\xff\xd8\xff\xe0\x00\x10JFIF", b"%PDF-1.7\n"],
)
def test_other_or_cut_short_data_has_no_header(data):
    assert read_header(data) is None


def test_an_image_within_the_caps_is_sent_byte_for_byte():
    data = picture(800, 600)
    fitted = fit_image(data, "shot.jpg")
    assert fitted.image.data == data and not fitted.resized
    assert (fitted.image.media_type, fitted.image.width, fitted.image.height) == (
        "image/jpeg",
        800,
        600,
    )
    assert fitted.image.source == "shot.jpg"
    assert fitted.describe().startswith("JPEG, 800×600, ")


def test_a_large_png_is_scaled_to_the_long_side_cap_and_stays_png():
    fitted = fit_image(png(4000, 1000), "wide.png")
    image = decoded(fitted.image.data)
    assert image.format == "PNG" and image.size == (MAX_SIDE, 392)
    assert (fitted.image.width, fitted.image.height) == (MAX_SIDE, 392)
    assert fitted.resized
    assert "PNG, 4000×1000" in fitted.describe() and "resized to PNG 1568×392" in fitted.describe()


def test_a_tall_jpeg_is_scaled_and_stays_jpeg():
    fitted = fit_image(picture(900, 3000), "tall.jpg")
    image = decoded(fitted.image.data)
    assert image.format == "JPEG" and image.size == (470, MAX_SIDE)
    assert fitted.image.media_type == "image/jpeg"


def test_a_transparent_image_keeps_its_transparency():
    fitted = fit_image(picture(2000, 2000, "PNG", mode="RGBA"), "logo.png")
    image = decoded(fitted.image.data)
    assert image.mode == "RGBA" and image.size == (MAX_SIDE, MAX_SIDE)


def test_a_png_too_many_bytes_for_its_size_becomes_a_jpeg_under_the_byte_cap():
    data = noise(1500, 1200)  # within the side cap, but random pixels do not compress
    assert len(data) > MAX_BYTES
    fitted = fit_image(data, "photo.png")
    assert len(fitted.image.data) <= MAX_BYTES
    assert fitted.image.media_type == "image/jpeg"
    assert decoded(fitted.image.data).format == "JPEG"


def test_an_animation_keeps_its_first_frame():
    from PIL import Image

    from tests.pictures import encoded

    frames = [Image.new("RGB", (2000, 100), color) for color in ((255, 0, 0), (0, 0, 255))]
    data = encoded(frames[0], "GIF", save_all=True, append_images=frames[1:])
    fitted = fit_image(data, "anim.gif")
    image = decoded(fitted.image.data).convert("RGB")
    assert image.size == (MAX_SIDE, 78)
    red, green, blue = image.getpixel((10, 10))
    assert red > 200 and blue < 50


def test_what_cannot_be_sent_is_one_line():
    with pytest.raises(ImageProblem, match="not a PNG, JPEG, GIF or WebP"):
        fit_image(b"GIF89a", "x.gif")  # the signature, then nothing
    with pytest.raises(ImageProblem, match="more pixels than caretz resizes"):
        fit_image(png(10_000, 6_000), "poster.png")
    broken = png(3000, 100)[:60]  # a header that promises pixels the file does not hold
    with pytest.raises(ImageProblem, match="cannot be decoded") as problem:
        fit_image(broken, "broken.png")
    assert "\n" not in str(problem.value)


def test_a_progressive_jpeg_header_is_read():
    from PIL import Image

    from tests.pictures import encoded

    data = encoded(Image.new("RGB", (640, 33), (9, 9, 9)), "JPEG", progressive=True)
    assert b"\xff\xc2" in data  # SOF2: the progressive frame header
    assert read_header(data) == ImageHeader("image/jpeg", 640, 33)
