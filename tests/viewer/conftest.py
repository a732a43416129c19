"""The viewer tests' server and browser, one of each per module."""

from collections.abc import Iterator

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from tests.server import running_server
from tests.viewer.page import CHROMEDRIVER, CHROMIUM, WAIT_SECONDS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with running_server(tmp_path_factory.mktemp("viewer") / "data") as client:
        yield client


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--force-device-scale-factor=1",
                     "--disable-gpu"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # for console_errors
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)  # fmt: skip
    driver.set_script_timeout(WAIT_SECONDS)
    try:
        yield driver
    finally:
        driver.quit()
