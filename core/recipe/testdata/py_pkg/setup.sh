#!/bin/bash
apt-get install -y libpq-dev
